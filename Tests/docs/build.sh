#!/usr/bin/env bash
# Builds VerityKit's DocC catalog with swift-docc-plugin, warnings as errors (a broken symbol link fails).
# The plugin is added to the manifest only when VERITY_DOCS is set, so apps that depend on VerityKit never resolve it.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=$(mktemp -d /tmp/verity-docs.XXXXXX)
export VERITY_DOCS=1
swift package --scratch-path .build-docs --disable-sandbox generate-documentation --target VerityKit \
    --warnings-as-errors --output-path "$OUT/VerityKit.doccarchive"
test -d "$OUT/VerityKit.doccarchive/data/documentation/veritykit"
for article in gettingstartedwithpush signingin checkingpossession; do
    test -f "$OUT/VerityKit.doccarchive/data/documentation/veritykit/$article.json" || {
        echo "FAIL: the article $article is missing from the archive" >&2
        exit 1
    }
done
echo "ok - VerityKit's documentation builds without warnings ($OUT/VerityKit.doccarchive)"
