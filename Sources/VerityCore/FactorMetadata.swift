import Foundation

/// The bound on a factor's app metadata, the same on every face (Twilio's `Metadata` has it too).
public enum FactorMetadata {
    /// The most characters the metadata may take as a JSON object.
    public static let maxLength = 1024

    /// Whether `metadata` fits: non-empty keys, and at most ``maxLength`` characters as compact JSON.
    public static func isValid(_ metadata: [String: String]) -> Bool {
        guard !metadata.keys.contains(""), let json = try? JSONEncoder().encode(metadata) else { return false }
        return json.count <= maxLength
    }
}
