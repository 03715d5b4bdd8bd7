/// The apps a host vouches for as users of its passkeys: what `/.well-known/apple-app-site-association`
/// (`webcredentials`) and `/.well-known/assetlinks.json` (`delegate_permission/common.get_login_creds`) say. A host
/// serves the apps of every project whose relying-party id is that host.
struct PasskeyAppAssociation: Sendable, Equatable {
    /// An Android app and the SHA-256 fingerprints of the certificates it may be signed with.
    struct AndroidApp: Sendable, Equatable {
        var packageName: String
        var certificateFingerprints: [String]
    }

    /// `TEAMID.bundle.id`, without duplicates.
    var appleAppIDs: [String] = []
    var androidApps: [AndroidApp] = []

    /// The apps of the projects among `projects` whose relying-party id is `host` (compared without letter case).
    init(host: String, projects: [Project]) {
        let host = host.lowercased()
        for settings in projects.compactMap(\.settings.passkeys) where settings.rpID == host {
            for id in settings.appleAppIDs ?? [] where !appleAppIDs.contains(id) { appleAppIDs.append(id) }
            for package in settings.androidPackages ?? [] {
                let app = AndroidApp(
                    packageName: package, certificateFingerprints: settings.androidCertificateFingerprints)
                if !androidApps.contains(app) { androidApps.append(app) }
            }
        }
    }
}
