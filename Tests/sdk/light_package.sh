#!/usr/bin/env bash
# An app that adds VerityKit by URL, with the server trait off, resolves only VerityKit's own dependency
# (swift-crypto, and swift-asn1 that it needs), builds VerityKit and runs a test with it. Run from the repository:
# it depends on this checkout's HEAD commit, as an app depends on a tagged release.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
APP=$(mktemp -d /tmp/verity-sdk-app.XXXXXX)
trap 'rm -rf "$APP"' EXIT
REVISION=$(git -C "$REPO" rev-parse HEAD)

mkdir -p "$APP/Tests/AppTests" "$APP/remote"
# The package's identity comes from the URL's last component: name it as the GitHub URL would.
ln -s "$REPO" "$APP/remote/verity"
cat >"$APP/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ScratchApp",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [.package(url: "file://$APP/remote/verity", revision: "$REVISION", traits: [])],
    targets: [
        .testTarget(name: "AppTests", dependencies: [.product(name: "VerityKit", package: "verity")])
    ]
)
MANIFEST
cat >"$APP/Tests/AppTests/AppTests.swift" <<'SWIFT'
import Foundation
import Testing
import VerityKit

@Test("VerityKit builds and runs in an app that has only VerityKit")
@MainActor
func sessionStartsSignedOut() throws {
    let verity = VeritySession(
        configuration: VerityConfiguration(baseURL: URL(string: "https://verity.example.com")!),
        projectId: "prj_0123456789", store: InMemorySecureStore())
    #expect(!verity.state.isSignedIn)
}
SWIFT

cd "$APP"
swift package resolve
pins=$(python3 -c 'import json; print(" ".join(sorted(p["identity"] for p in json.load(open("Package.resolved"))["pins"])))')
echo "resolved: $pins"
if [ "$pins" != "swift-asn1 swift-crypto verity" ]; then
    echo "FAIL: the app resolved more than VerityKit needs: $pins" >&2
    exit 1
fi
swift test
echo "ok - an app with VerityKit resolves only: $pins"
