// A stand-in for Apple's UserNotifications framework, for type-checking VerityKit's Apple-only code and samples on
// Linux. Never ships, never runs. Each declaration is transcribed from the Swift declaration Apple's documentation
// shows (developer.apple.com/documentation/usernotifications/<symbol>), named above it.
//
// The immutable notification classes are `NS_SWIFT_SENDABLE` in Apple's headers, which Swift imports as
// `@unchecked Sendable`; `UNMutableNotificationContent` is `NS_SWIFT_NONSENDABLE`, which a Swift subclass cannot
// express, so it stays a subclass here (nothing in VerityKit sends one across actors). None of these is isolated to
// an actor, and `UNNotificationServiceExtension`'s content handler is a plain, non-`Sendable` closure.
import Foundation

// https://developer.apple.com/documentation/usernotifications/unnotificationcontent
open class UNNotificationContent: NSObject, @unchecked Sendable {
    fileprivate var storedTitle = ""
    fileprivate var storedSubtitle = ""
    fileprivate var storedBody = ""
    fileprivate var storedUserInfo: [AnyHashable: Any] = [:]
    fileprivate var storedCategoryIdentifier = ""
    fileprivate var storedThreadIdentifier = ""

    override public init() { super.init() }

    open var title: String { storedTitle }
    open var subtitle: String { storedSubtitle }
    open var body: String { storedBody }
    open var userInfo: [AnyHashable: Any] { storedUserInfo }
    open var categoryIdentifier: String { storedCategoryIdentifier }
    open var threadIdentifier: String { storedThreadIdentifier }

    // NSMutableCopying: https://developer.apple.com/documentation/foundation/nsmutablecopying/mutablecopy()
    // (`func mutableCopy() -> Any`)
    override open func mutableCopy() -> Any {
        let copy = UNMutableNotificationContent()
        copy.storedTitle = storedTitle
        copy.storedSubtitle = storedSubtitle
        copy.storedBody = storedBody
        copy.storedUserInfo = storedUserInfo
        copy.storedCategoryIdentifier = storedCategoryIdentifier
        copy.storedThreadIdentifier = storedThreadIdentifier
        return copy
    }
}

// https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    override open var title: String {
        get { storedTitle }
        set { storedTitle = newValue }
    }
    override open var subtitle: String {
        get { storedSubtitle }
        set { storedSubtitle = newValue }
    }
    override open var body: String {
        get { storedBody }
        set { storedBody = newValue }
    }
    override open var userInfo: [AnyHashable: Any] {
        get { storedUserInfo }
        set { storedUserInfo = newValue }
    }
    override open var categoryIdentifier: String {
        get { storedCategoryIdentifier }
        set { storedCategoryIdentifier = newValue }
    }
    override open var threadIdentifier: String {
        get { storedThreadIdentifier }
        set { storedThreadIdentifier = newValue }
    }
}

// https://developer.apple.com/documentation/usernotifications/unnotificationrequest
open class UNNotificationRequest: NSObject, @unchecked Sendable {
    open var identifier: String { fatalError("UserNotifications stand-in: type-checking only") }
    open var content: UNNotificationContent { fatalError("UserNotifications stand-in: type-checking only") }
}

// https://developer.apple.com/documentation/usernotifications/unnotification
open class UNNotification: NSObject, @unchecked Sendable {
    open var date: Date { fatalError("UserNotifications stand-in: type-checking only") }
    open var request: UNNotificationRequest { fatalError("UserNotifications stand-in: type-checking only") }
}

// https://developer.apple.com/documentation/usernotifications/unnotificationresponse
open class UNNotificationResponse: NSObject, @unchecked Sendable {
    open var notification: UNNotification { fatalError("UserNotifications stand-in: type-checking only") }
    open var actionIdentifier: String { fatalError("UserNotifications stand-in: type-checking only") }
}

// https://developer.apple.com/documentation/usernotifications/unnotificationdefaultactionidentifier
public let UNNotificationDefaultActionIdentifier: String = "com.apple.UNNotificationDefaultActionIdentifier"
// https://developer.apple.com/documentation/usernotifications/unnotificationdismissactionidentifier
public let UNNotificationDismissActionIdentifier: String = "com.apple.UNNotificationDismissActionIdentifier"

// https://developer.apple.com/documentation/usernotifications/unnotificationactionoptions:
// `struct UNNotificationActionOptions: OptionSet, @unchecked Sendable`
public struct UNNotificationActionOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

// https://developer.apple.com/documentation/usernotifications/unnotificationaction
open class UNNotificationAction: NSObject, @unchecked Sendable {
    public let identifier: String
    public let title: String
    public let options: UNNotificationActionOptions

    // https://developer.apple.com/documentation/usernotifications/unnotificationaction/init(identifier:title:options:)
    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.identifier = identifier
        self.title = title
        self.options = options
    }
}

// https://developer.apple.com/documentation/usernotifications/unnotificationcategoryoptions:
// `struct UNNotificationCategoryOptions: OptionSet, @unchecked Sendable`
public struct UNNotificationCategoryOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
}

// https://developer.apple.com/documentation/usernotifications/unnotificationcategory
open class UNNotificationCategory: NSObject, @unchecked Sendable {
    public let identifier: String
    public let actions: [UNNotificationAction]
    public let intentIdentifiers: [String]
    public let options: UNNotificationCategoryOptions

    // https://developer.apple.com/documentation/usernotifications/unnotificationcategory/init(identifier:actions:intentidentifiers:options:)
    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
    }
}

// https://developer.apple.com/documentation/usernotifications/unauthorizationoptions:
// `struct UNAuthorizationOptions: OptionSet, @unchecked Sendable`
public struct UNAuthorizationOptions: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
}

// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    // https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/current()
    open class func current() -> UNUserNotificationCenter {
        fatalError("UserNotifications stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/setnotificationcategories(_:)
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        fatalError("UserNotifications stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/requestauthorization(options:completionhandler:)
    // imported with its `async` variant
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        fatalError("UserNotifications stand-in: type-checking only")
    }
}

// https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension
open class UNNotificationServiceExtension: NSObject {
    override public init() { super.init() }

    // https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/didreceive(_:withcontenthandler:)
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {}

    // https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/serviceextensiontimewillexpire()
    open func serviceExtensionTimeWillExpire() {}
}
