import Foundation

/// Create, read, update, list and delete of a project's Twilio Verify services (each a ``TwilioServiceRecord``):
/// the service of ``TwilioServiceStore``, as ``FactorService`` is of `FactorStore`.
struct TwilioServiceService: Sendable, UsesRuntime {
    private let store: TwilioServiceStore
    let runtime: Runtime

    init(store: TwilioServiceStore, runtime: Runtime) {
        self.store = store
        self.runtime = runtime
    }

    func create(_ form: TwilioForm, in project: Project) async throws -> TwilioServiceRecord {
        guard form.string("FriendlyName") != nil else { throw TwilioError.missingParameter("FriendlyName") }
        let now = clock.now()
        var service = TwilioServiceRecord(
            sid: TwilioSID.make("VA", random: random), projectId: project.id, friendlyName: "",
            codeLength: project.settings.codeLength, push: .init(), totp: .init(), createdAt: now, updatedAt: now)
        try service.apply(form)
        try await store.insert(service)
        return service
    }

    /// The project's service `sid`, or 20404.
    func service(_ sid: String, in project: Project) async throws -> TwilioServiceRecord {
        guard TwilioSID.isValid(sid, prefix: "VA"),
            let service = try await store.service(sid: sid, projectId: project.id)
        else {
            throw TwilioError.notFound("/Services/\(sid)")
        }
        return service
    }

    func update(_ sid: String, _ form: TwilioForm, in project: Project) async throws -> TwilioServiceRecord {
        var service = try await service(sid, in: project)
        try service.apply(form)
        service.updatedAt = clock.now()
        guard try await store.update(service) else { throw TwilioError.notFound("/Services/\(sid)") }
        return service
    }

    func list(after: String?, limit: Int, in project: Project) async throws -> [TwilioServiceRecord] {
        try await store.services(projectId: project.id, after: after, limit: limit)
    }

    /// Deletes the service in the caller's unit of work, its entities and webhooks with it
    /// (``TwilioPush/deleteService(_:in:)`` deletes its factors and access tokens beside); 20404 when there is none.
    func delete(_ sid: String, in project: Project, in work: UnitOfWork) async throws {
        guard TwilioSID.isValid(sid, prefix: "VA"), try await store.delete(sid: sid, projectId: project.id, in: work)
        else {
            throw TwilioError.notFound("/Services/\(sid)")
        }
    }
}
