// swift-tools-version:6.1
import PackageDescription

// Type-checks VerityKit's Apple-only code, two sample targets and every code listing of its documentation on Linux,
// against stand-ins for Apple's frameworks (StandIns/). Test-only: never a product of the root package, never shipped.
// Sources/VerityCore and Sources/VerityKit are links to the real sources. Run it with Tests/apple/typecheck.sh.
//
// Swift 6 language mode (complete concurrency checking) and warnings as errors, for everything in this package.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .unsafeFlags(["-warnings-as-errors"]),
]

/// One stand-in module per Apple framework VerityKit or its samples import.
func standIn(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: dependencies, path: "StandIns/\(name)", swiftSettings: [.swiftLanguageMode(.v6)])
}

let package = Package(
    name: "verity-apple-typecheck",
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2")
    ],
    targets: [
        standIn("Security"),
        standIn("LocalAuthentication"),
        standIn("CryptoKit", [.product(name: "Crypto", package: "swift-crypto")]),
        standIn("UserNotifications"),
        standIn("UserNotificationsUI", ["UserNotifications"]),
        standIn("UIKit"),
        standIn("SwiftUI"),
        standIn("DeviceCheck"),
        standIn("Network"),
        standIn("AuthenticationServices", ["UIKit"]),
        .target(
            name: "VerityCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .target(
            name: "VerityKit",
            dependencies: [
                "VerityCore", "Security", "LocalAuthentication", "CryptoKit", "UserNotifications", "DeviceCheck",
                "Network", "AuthenticationServices",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["VerityKit.docc"],
            resources: [.copy("Resources/PrivacyInfo.xcprivacy")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SampleApp",
            dependencies: ["VerityKit", "SwiftUI", "UserNotifications"],
            path: "Samples/SampleApp",
            swiftSettings: strict
        ),
        .target(
            name: "SampleNotificationExtensions",
            dependencies: ["VerityKit", "UIKit", "UserNotifications", "UserNotificationsUI"],
            path: "Samples/SampleNotificationExtensions",
            swiftSettings: strict
        ),
        // What the listings take from their surroundings, declared by hand.
        .target(
            name: "ListingContext",
            dependencies: ["VerityCore", "VerityKit", "SwiftUI", "UIKit", "UserNotifications"],
            path: "ListingContext",
            swiftSettings: strict
        ),
        // Written by extract_listings.py from the DocC catalog and README.md, one file per listing.
        .target(
            name: "DocListings",
            dependencies: [
                "ListingContext", "VerityCore", "VerityKit", "SwiftUI", "UIKit", "UserNotifications",
                "UserNotificationsUI",
            ],
            path: "Listings",
            // A listing shows a step, so a value it makes is often not used again: warnings stay warnings here (every
            // concurrency diagnostic is an error in Swift 6 mode all the same).
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
