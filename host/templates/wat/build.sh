#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm. `sift component new` assembles the
# text, embeds the contract and encodes the component (set SIFT to use a
# sift that is not on PATH).
set -euo pipefail
cd "$(dirname "$0")"
"${SIFT:-sift}" component new plugin.wat -o {{crate}}.wasm
