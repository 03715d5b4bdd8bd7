import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Secure stores")
struct SecureStoreTests {
    @Test("InMemorySecureStore stores, replaces, removes and clears")
    func inMemory() {
        let store = InMemorySecureStore()
        #expect(store.data(forKey: "a") == nil)
        store.set(Data([1]), forKey: "a")
        store.set(Data([2]), forKey: "b")
        store.set(Data([3]), forKey: "a")
        #expect(store.data(forKey: "a") == Data([3]))
        store.removeData(forKey: "a")
        store.removeData(forKey: "missing")
        #expect(store.data(forKey: "a") == nil)
        #expect(store.allItems == ["b": Data([2])])
        store.removeAll()
        #expect(store.allItems.isEmpty)
    }

    @Test("EncryptedFileSecureStore round-trips items in sealed files")
    func encryptedRoundTrip() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EncryptedFileSecureStore(directory: directory)
        #expect(try store.data(forKey: "verity.factors") == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path))

        let plaintext = Data(#"{"secret":"the private key material"}"#.utf8)
        try store.set(plaintext, forKey: "verity.factors")
        try store.set(Data("other".utf8), forKey: "verity.other")
        #expect(try store.data(forKey: "verity.factors") == plaintext)

        // A second instance over the same directory reads what the first wrote.
        let reopened = EncryptedFileSecureStore(directory: directory)
        #expect(try reopened.data(forKey: "verity.factors") == plaintext)
        #expect(try reopened.data(forKey: "verity.missing") == nil)

        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.count == 3)
        #expect(names.contains(EncryptedFileSecureStore.keyFileName))
        for name in names where name != EncryptedFileSecureStore.keyFileName {
            #expect(!name.contains("verity"))
            let contents = try Data(contentsOf: directory.appendingPathComponent(name))
            #expect(contents.range(of: Data("private key".utf8)) == nil)
            #expect(contents.range(of: Data("verity.factors".utf8)) == nil)
            #expect(contents.range(of: Data("other".utf8)) == nil)
        }
        let keyFile = directory.appendingPathComponent(EncryptedFileSecureStore.keyFileName)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        try store.set(Data("replaced".utf8), forKey: "verity.factors")
        #expect(try reopened.data(forKey: "verity.factors") == Data("replaced".utf8))
        try store.removeData(forKey: "verity.factors")
        #expect(try store.data(forKey: "verity.factors") == nil)
        #expect(try store.data(forKey: "verity.other") == Data("other".utf8))

        try store.removeAll()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(try store.data(forKey: "verity.other") == nil)
        try store.set(Data("fresh".utf8), forKey: "verity.other")
        #expect(try store.data(forKey: "verity.other") == Data("fresh".utf8))
    }

    @Test("a tampered or swapped item fails authentication")
    func encryptedTampering() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EncryptedFileSecureStore(directory: directory)
        try store.set(Data("first".utf8), forKey: "a")
        try store.set(Data("second".utf8), forKey: "b")
        let items = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent != EncryptedFileSecureStore.keyFileName }
        try #require(items.count == 2)

        // Swapping the files: each now holds the other's sealed item, bound to the other's name.
        let first = try Data(contentsOf: items[0])
        try Data(contentsOf: items[1]).write(to: items[0])
        try first.write(to: items[1])
        for key in ["a", "b"] {
            let error = #expect(throws: VerityKitError.self) { try store.data(forKey: key) }
            #expect(error?.code == "storage")
        }

        var flipped = try Data(contentsOf: items[0])
        flipped[flipped.count - 1] ^= 0x01
        try flipped.write(to: items[0])
        #expect(throws: VerityKitError.self) { try EncryptedFileSecureStore(directory: directory).data(forKey: "a") }
    }

    @Test("VerityPush works over an EncryptedFileSecureStore")
    func pushOverEncryptedStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = RecordingTransport()
        let configuration = VerityConfiguration(baseURL: try Fixture.baseURL())
        let push = VerityPush(
            configuration: configuration, transport: transport, store: EncryptedFileSecureStore(directory: directory))
        await transport.enqueue(
            try Fixture.json(
                EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))
        let factor = try await push.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "Phone", pushPlatform: .none, pushToken: nil)

        // A new instance (the app restarted) finds the factor and can still sign for it.
        let restarted = VerityPush(
            configuration: configuration, transport: transport, store: EncryptedFileSecureStore(directory: directory))
        #expect(try await restarted.factors() == [factor])
        await transport.enqueue(try Fixture.json(Fixture.factor(status: .verified)))
        #expect(try await restarted.verifyFactor(factor.id).isVerified)
    }

    @Test("an EncryptedFileSecureStore can keep its key apart from the data it seals")
    func keyApartFromData() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("verity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let keys = root.appendingPathComponent("keys")
        try EncryptedFileSecureStore(directory: data, keyDirectory: keys).set(Data("secret".utf8), forKey: "a")

        let dataFiles = try FileManager.default.contentsOfDirectory(atPath: data.path)
        #expect(!dataFiles.contains(EncryptedFileSecureStore.keyFileName))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: keys.path) == [EncryptedFileSecureStore.keyFileName])
        let keyFile = keys.appendingPathComponent(EncryptedFileSecureStore.keyFileName)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // Another instance (the extension) over the same two directories reads it; one without the key cannot.
        #expect(
            try EncryptedFileSecureStore(directory: data, keyDirectory: keys).data(forKey: "a") == Data("secret".utf8))
        #expect(try EncryptedFileSecureStore(directory: data).data(forKey: "a") == nil)
    }
}
