import Foundation

/// A page of results.
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    /// Pass as `cursor` to get the next page; absent on the last page (and on lists that are never paged).
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String? = nil) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
