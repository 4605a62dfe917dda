#!/usr/bin/env bash
# Builds the C SdkProbe with the C SDK's build script:
#   bash build.sh OUT.wasm   (sift: $SIFT, else `sift` on PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../../../../plugin-sdk/c/build.sh" "$1" "$here/probe.c"
echo "built $1"
