import ArgumentParser
import Foundation
import VerityCore
import VerityKit

/// The enrolled factor as `enroll` and `status` show it.
struct DeviceSummary: Encodable {
    var factorId: String
    var userId: String
    var friendlyName: String
    var status: FactorStatus
    var server: URL
    var stateDir: String
    var createdAt: Date
    var verifiedAt: Date?
    var userVerificationKey: Bool

    init(factor: PushFactor, server: URL, directory: URL) {
        userVerificationKey = factor.hasUserVerificationKey
        factorId = factor.id
        userId = factor.userId
        friendlyName = factor.friendlyName
        status = factor.status
        self.server = server
        stateDir = directory.path
        createdAt = factor.createdAt
        verifiedAt = factor.verifiedAt
    }

    var text: String {
        """
        Factor:   \(factorId)  (\(status.rawValue))
        User:     \(userId)
        Name:     \(friendlyName)
        UV key:   \(userVerificationKey ? "yes (approves `required` challenges after --uv)" : "no")
        Server:   \(server.absoluteString)
        Enrolled: \(createdAt.formatted(.iso8601))
        State:    \(stateDir)
        """
    }
}
