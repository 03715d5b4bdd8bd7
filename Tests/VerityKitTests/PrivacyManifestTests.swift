import Foundation
import Testing

/// Apple's required-reason API categories, with names whose use in VerityKit's sources needs the category declared.
private let requiredReasonAPIs: [String: [String]] = [
    "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults"],
    "NSPrivacyAccessedAPICategoryFileTimestamp": [
        "creationDate", "modificationDate", "contentModificationDate", "attributesOfItem", "getattrlist", "stat(",
    ],
    "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
    "NSPrivacyAccessedAPICategoryDiskSpace": ["volumeAvailableCapacity", "systemFreeSize", "statfs"],
    "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
]

@Suite("VerityKit's privacy manifest")
struct PrivacyManifestTests {
    private static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/VerityKit")

    @Test("it is a property list that declares no tracking and, with a reason, exactly the required-reason APIs used")
    func declaresWhatIsUsed() throws {
        let data = try Data(contentsOf: Self.sources.appendingPathComponent("Resources/PrivacyInfo.xcprivacy"))
        let manifest = try #require(
            try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)

        let declared = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var reasons: [String: [String]] = [:]
        for entry in declared {
            let category = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            reasons[category] = entry["NSPrivacyAccessedAPITypeReasons"] as? [String] ?? []
        }

        let files = try FileManager.default.contentsOfDirectory(at: Self.sources, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        let code = try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        let used = Set(requiredReasonAPIs.filter { _, names in names.contains { code.contains($0) } }.keys)

        #expect(Set(reasons.keys) == used)
        for (category, codes) in reasons {
            #expect(!codes.isEmpty, "\(category) needs a reason")
        }
        // The app's own defaults (CA92.1) and, since the marker takes an App Group suite for the app and its
        // extensions, the group's (1C8F.1).
        let groupSuite = code.contains("UserDefaults(suiteName:")
        #expect(reasons["NSPrivacyAccessedAPICategoryUserDefaults"] == ["CA92.1"] + (groupSuite ? ["1C8F.1"] : []))

        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(
                entry["NSPrivacyCollectedDataTypePurposes"] as? [String]
                    == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        }
    }
}
