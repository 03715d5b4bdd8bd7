import Foundation
import Hummingbird
import VerityCore

/// The `meta` block of a list response. The URLs are absolute and point at this server, since clients fetch the
/// next page by GETting `next_page_url` as it is.
struct TwilioPageMeta: Encodable, Sendable {
    var page: Int
    var pageSize: Int
    var firstPageUrl: String
    var previousPageUrl: Nullable<String>
    var nextPageUrl: Nullable<String>
    var url: String
    var key: String

    /// - Parameters:
    ///   - listURL: The collection's absolute URL, without a query.
    ///   - nextAfter: The SID the next page starts after; nil on the last page.
    ///   - filters: The list's filters (`Status`, `Order`, …), repeated in every URL so each page is of the same list.
    init(
        _ request: TwilioPageRequest, listURL: String, key: String, nextAfter: String?,
        filters: KeyValuePairs<String, String?> = [:]
    ) {
        let query = filters.compactMap { name, value in
            value.map { "&\(name)=\(PercentEncoding.encode($0))" }
        }.joined()
        func url(page: Int, token: String?) -> String {
            "\(listURL)?PageSize=\(request.pageSize)&Page=\(page)\(query)" + (token.map { "&PageToken=PA\($0)" } ?? "")
        }
        self.page = request.page
        pageSize = request.pageSize
        firstPageUrl = url(page: 0, token: nil)
        // Tokens only go forwards; a client that wants an earlier page starts from the first one again.
        previousPageUrl = .null
        nextPageUrl = Nullable(nextAfter.map { url(page: request.page + 1, token: $0) })
        self.url = url(page: request.page, token: request.after)
        self.key = key
    }
}

extension TwilioPageMeta {
    /// One page of a list in creation order, and its `meta`: asks `fetch` for one item more than a page (after the
    /// SID the request's token names) to know whether another page follows.
    ///
    /// - Parameter filters: The list's filters, repeated in the page URLs (see the initialiser).
    static func page<Item>(
        _ query: TwilioForm, sidPrefix: String, listURL: String, key: String,
        filters: KeyValuePairs<String, String?> = [:],
        fetch: (_ after: String?, _ limit: Int) async throws -> [Item], sid: (Item) -> String
    ) async throws -> ([Item], TwilioPageMeta) {
        let request = try TwilioPageRequest(query, sidPrefix: sidPrefix)
        var found = try await fetch(request.after, request.pageSize + 1)
        let hasMore = found.count > request.pageSize
        if hasMore { found.removeLast() }
        let meta = TwilioPageMeta(
            request, listURL: listURL, key: key, nextAfter: hasMore ? found.last.map(sid) : nil, filters: filters)
        return (found, meta)
    }

    /// A list's response: the page's `items` under the list's ``key``, beside this `meta`.
    func response(_ items: [JSONValue]) throws -> Response {
        try TwilioJSON.response(object: [key: .array(items), "meta": try TwilioJSON.value(self)])
    }
}
