import Foundation

/// A factor is usable only once it proved possession of its key or secret.
public enum FactorStatus: String, WireEnum, Sendable {
    case unverified
    case verified
}
