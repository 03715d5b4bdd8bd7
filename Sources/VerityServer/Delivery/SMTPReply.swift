import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// One reply from the server: its three-digit code and the text of each line.
struct SMTPReply: Sendable, Equatable {
    var code: Int
    var lines: [String]

    /// The enhanced status code (RFC 3463, e.g. `5.1.1`) at the start of the first line, if any.
    ///
    /// Failure reasons quote only this and the code, never the free text: servers like to echo the
    /// recipient address there.
    var enhancedStatus: String? {
        guard let first = lines.first, let token = first.split(separator: " ").first else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            let klass = parts.first, ["2", "4", "5"].contains(klass)
        else { return nil }
        return String(token)
    }

    /// The code and enhanced status, e.g. `550 5.1.1`: safe to put in a failure reason.
    var summary: String {
        if let enhancedStatus { return "\(code) \(enhancedStatus)" }
        return "\(code)"
    }

    /// The EHLO keywords (upper-cased) with their parameters, taken from every line but the greeting one.
    var extensions: [String: [String]] {
        var result: [String: [String]] = [:]
        for line in lines.dropFirst() {
            let words = line.split(separator: " ").map(String.init)
            guard let keyword = words.first else { continue }
            result[keyword.uppercased()] = words.dropFirst().map { $0.uppercased() }
        }
        return result
    }
}
