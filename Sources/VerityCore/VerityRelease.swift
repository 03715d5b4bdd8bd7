/// The release of Verity this code is: the server's (`verity --version`, `verity_build_info` in `/metrics`, the
/// OpenAPI document's `info.version`) and VerityKit's, which ship together.
public enum VerityRelease {
    /// The version, `MAJOR.MINOR.PATCH`.
    public static let version = "0.1.0"
}
