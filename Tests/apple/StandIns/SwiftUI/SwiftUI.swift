// A stand-in for the small part of SwiftUI that the sample app uses, for type-checking it on Linux. Never ships,
// never runs. Each declaration follows the Swift declaration Apple's documentation shows
// (developer.apple.com/documentation/swiftui/<symbol>), named above it, with its isolation: `View`, `Scene` and
// `App` are `@MainActor @preconcurrency`, `Button`'s action is `@MainActor`, and `task(priority:_:)` takes an
// `@isolated(any) @Sendable` closure that inherits the caller's actor.
import Foundation

private func unavailable() -> Never {
    fatalError("SwiftUI stand-in: type-checking only")
}

// https://developer.apple.com/documentation/swiftui/view
@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View {
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/emptyview
public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/tupleview
public struct TupleView<T>: View {
    nonisolated public init(_ value: T) {}
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/viewbuilder
@resultBuilder
public struct ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<
        (repeat each Content)
    > {
        TupleView((repeat each content))
    }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<First: View, Second: View>(first: First) -> EitherView<First, Second> {
        EitherView()
    }
    public static func buildEither<First: View, Second: View>(second: Second) -> EitherView<First, Second> {
        EitherView()
    }
}

extension Optional: View where Wrapped: View {
    public var body: Never { unavailable() }
}

/// What `ViewBuilder` makes of an `if`/`else` (`_ConditionalContent` in SwiftUI).
public struct EitherView<First: View, Second: View>: View {
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/text
public struct Text: View, Equatable, Sendable {
    // https://developer.apple.com/documentation/swiftui/text/init(_:)-9d1g4
    public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/button
@MainActor @preconcurrency
public struct Button<Label: View>: View {
    // https://developer.apple.com/documentation/swiftui/button/init(_:action:)-lpm7
    public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) where Label == Text {}
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/vstack
public struct VStack<Content: View>: View {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { unavailable() }
}

// https://developer.apple.com/documentation/swiftui/foreach
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: View {
    public var body: Never { unavailable() }
}

extension ForEach where ID == Data.Element.ID, Data.Element: Identifiable {
    // https://developer.apple.com/documentation/swiftui/foreach/init(_:content:)
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
}

extension View {
    // https://developer.apple.com/documentation/swiftui/view/task(priority:_:)
    nonisolated public func task(
        priority: TaskPriority = .userInitiated,
        @_inheritActorContext _ action: @escaping @isolated(any) @Sendable () async -> Void
    ) -> some View {
        self
    }
}

// https://developer.apple.com/documentation/swiftui/dynamicproperty
public protocol DynamicProperty {}

// https://developer.apple.com/documentation/swiftui/state
@propertyWrapper
public struct State<Value>: DynamicProperty {
    public init(wrappedValue value: Value) {}
    public var wrappedValue: Value {
        get { unavailable() }
        nonmutating set { unavailable() }
    }
}

extension State: Sendable where Value: Sendable {}

// https://developer.apple.com/documentation/swiftui/scene
@MainActor @preconcurrency
public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swiftui/scenebuilder
@resultBuilder
public struct SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

// https://developer.apple.com/documentation/swiftui/windowgroup
public struct WindowGroup<Content: View>: Scene {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { unavailable() }
}

extension Never: Scene {}

// https://developer.apple.com/documentation/swiftui/app
@MainActor @preconcurrency
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
    @MainActor @preconcurrency init()
}

extension App {
    // https://developer.apple.com/documentation/swiftui/app/main()
    @MainActor @preconcurrency public static func main() {
        unavailable()
    }
}

// https://developer.apple.com/documentation/swiftui/list
public struct List<SelectionValue: Hashable, Content: View>: View {
    public var body: Never { unavailable() }
}

extension List {
    // https://developer.apple.com/documentation/swiftui/list/init(_:rowcontent:)-7vpgz
    public init<Data: RandomAccessCollection, RowContent: View>(
        _ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent
    )
    where
        Content == ForEach<Data, Data.Element.ID, RowContent>, Data.Element: Identifiable, SelectionValue == Never
    {}
}
