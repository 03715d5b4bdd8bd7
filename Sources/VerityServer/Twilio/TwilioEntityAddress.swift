import Foundation

/// Where a passkey factor or challenge sits in Twilio's tree: the project and service it belongs to, and the entity
/// (`YE…`) of the customer's `identity` it is for. Its `service_sid`, `entity_sid` and `identity` fields and its URL
/// are made of it.
struct TwilioEntityAddress: Sendable, Equatable {
    var projectId: String
    var serviceSid: String
    var identity: String
    var entitySid: String
}

extension TwilioEntityAddress {
    /// The address of `entity`, a service's entity in `project`.
    init(_ entity: TwilioEntity, in project: Project) {
        self.init(
            projectId: project.id, serviceSid: entity.serviceSid, identity: entity.identity, entitySid: entity.sid)
    }
}
