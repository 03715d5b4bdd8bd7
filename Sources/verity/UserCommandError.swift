import ArgumentParser
import Foundation
import VerityCore
import VerityServer

/// A refusal from the user rules, printed as `code: detail` rather than as a Swift value.
struct UserCommandError: Error, CustomStringConvertible {
    var description: String
}
