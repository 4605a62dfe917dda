#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm. `sift component new` assembles the
# text, embeds the contract and encodes the component.
set -euo pipefail
cd "$(dirname "$0")"
# sift: $SIFT, else `sift` on PATH, else the sift that created this project.
export SIFT="${SIFT:-$(command -v sift || echo '{{sift}}')}"
"$SIFT" component new plugin.wat -o {{crate}}.wasm
