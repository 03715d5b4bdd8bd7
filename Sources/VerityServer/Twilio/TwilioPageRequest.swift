import Foundation
import VerityCore

/// Twilio's paging: `PageSize` (default 50, at most 1000), `Page` (an index, informational) and an opaque
/// `PageToken` the server issued (`PA` + the SID of the previous page's last item).
struct TwilioPageRequest: Sendable {
    var pageSize = 50
    var page = 0
    /// The SID the page starts after.
    var after: String?

    init(_ query: TwilioForm, sidPrefix: String) throws {
        if let size = try query.integer("PageSize", in: 1...1000) { pageSize = size }
        if let page = try query.integer("Page", in: 0...Int(Int32.max)) { self.page = page }
        // The iOS SDK spells it `pageToken`.
        if let token = query.string("PageToken") ?? query.string("pageToken") {
            let sid = String(token.dropFirst(2))
            guard token.hasPrefix("PA"), TwilioSID.isValid(sid, prefix: sidPrefix) else {
                throw TwilioError.invalidParameter("PageToken")
            }
            after = sid
        }
    }
}
