// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The server, its command line and its tests: on by default, so `swift run verity serve` and `swift test` work in
/// this repository. An app that wants only VerityKit turns it off (`traits: []`), and then resolves only VerityKit's
/// own dependency, swift-crypto.
let server: TargetDependencyCondition? = .when(traits: ["Server"])

let package = Package(
    name: "verity",
    // Every Apple platform VerityKit builds for, at the versions its `@Observable` state needs. On watchOS and tvOS the
    // system prompt is not there (LocalAuthenticationUserVerifier), and on tvOS neither are the notification actions
    // and extensions: that code is left out there on purpose.
    platforms: [.macOS(.v14), .iOS(.v17), .watchOS(.v10), .tvOS(.v17), .visionOS(.v1)],
    products: [
        .executable(name: "verity", targets: ["verity"]),
        .library(name: "VerityCore", targets: ["VerityCore"]),
        .library(name: "VerityServer", targets: ["VerityServer"]),
        .library(name: "VerityKit", targets: ["VerityKit"]),
        .library(name: "VerityJWT", targets: ["VerityJWT"]),
    ],
    traits: [
        .trait(name: "Server", description: "The Verity server, its command line and its tests."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // App Attest's certificate chains (and the SMTP tests' self-signed certificate, made without the openssl CLI).
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
    ],
    targets: [
        .target(
            name: "VerityCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // One C call SQLite offers only as a variadic function (see its header).
        .target(name: "CVeritySQLite"),
        .target(
            name: "VerityServer",
            dependencies: [
                "VerityCore",
                .target(name: "CVeritySQLite", condition: server),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: server),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: server),
                .product(name: "NIOTLS", package: "swift-nio", condition: server),
                .product(name: "PostgresKit", package: "postgres-kit", condition: server),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
                .product(name: "Prometheus", package: "swift-prometheus", condition: server),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: server),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: server),
                .product(name: "X509", package: "swift-certificates", condition: server),
            ],
            resources: [.copy("Resources/openapi.json")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VerityKit",
            dependencies: ["VerityCore", .product(name: "Crypto", package: "swift-crypto")],
            // Apps that ship VerityKit declare what it uses through this manifest (Xcode merges it into the app's).
            resources: [.copy("Resources/PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VerityJWT",
            dependencies: ["VerityCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "verity",
            dependencies: [
                "VerityServer",
                "VerityKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VerityTestSupport",
            dependencies: [
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "PostgresKit", package: "postgres-kit", condition: server),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
            ],
            path: "Tests/VerityTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerityCoreTests",
            dependencies: ["VerityCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerityServerTests",
            dependencies: [
                "VerityServer",
                "VerityJWT",
                "VerityTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: server),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "HummingbirdHTTP2", package: "hummingbird", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: server),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: server),
                .product(name: "X509", package: "swift-certificates", condition: server),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerityJWTTests",
            dependencies: ["VerityCore", "VerityJWT"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerityKitTests",
            dependencies: ["VerityCore", "VerityKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "VerityCore",
                "VerityJWT",
                "VerityKit",
                "VerityServer",
                "VerityTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// The documentation build (Tests/docs/build.sh) adds the DocC plugin; apps and the server never resolve it.
if Context.environment["VERITY_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
