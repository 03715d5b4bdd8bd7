import Foundation

/// A configuration the server cannot start with; the message says what to fix.
public struct ConfigurationError: Error, CustomStringConvertible, LocalizedError {
    public let description: String
    public init(_ description: String) { self.description = description }
    public var errorDescription: String? { description }
}
