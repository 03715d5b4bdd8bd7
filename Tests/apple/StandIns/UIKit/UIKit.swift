// A stand-in for the few UIKit types VerityKit's samples use, for type-checking them on Linux. Never ships, never
// runs. Transcribed from developer.apple.com/documentation/uikit/<symbol>: both classes are main-actor isolated
// (`@MainActor class UIResponder: NSObject`, `@MainActor class UIViewController: UIResponder`).
import Foundation

// https://developer.apple.com/documentation/uikit/uiresponder
@MainActor
open class UIResponder: NSObject {
    override public init() { super.init() }
}

// https://developer.apple.com/documentation/uikit/uiviewcontroller
@MainActor
open class UIViewController: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/viewdidload()
    open func viewDidLoad() {}
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/title
    open var title: String?
}

// https://developer.apple.com/documentation/uikit/uiview: `@MainActor class UIView: UIResponder`
@MainActor
open class UIView: UIResponder {}

// https://developer.apple.com/documentation/uikit/uiwindow: `@MainActor class UIWindow: UIView`
@MainActor
open class UIWindow: UIView {}
