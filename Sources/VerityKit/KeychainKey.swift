import Foundation

/// A `SecKey` held by VerityKit between finding it and signing with it.
// @unchecked Sendable: the reference is an immutable `SecKey`, which Security allows to be used from any thread.
struct KeychainKey: @unchecked Sendable {
    var reference: AnyObject
}
