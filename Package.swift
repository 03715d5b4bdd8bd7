// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "verity",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "verity", targets: ["verity"]),
        .library(name: "VerityCore", targets: ["VerityCore"]),
        .library(name: "VerityServer", targets: ["VerityServer"]),
        .library(name: "VerityKit", targets: ["VerityKit"]),
        .library(name: "VerityJWT", targets: ["VerityJWT"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Tests only: the SMTP tests make their self-signed certificate with these instead of the openssl CLI.
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
        .target(
            name: "VerityServer",
            dependencies: [
                "VerityCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VerityTestSupport",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
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
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
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
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
