#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm. `sift component new` assembles the
# text, embeds the contract and encodes the component.
set -euo pipefail
cd "$(dirname "$0")"
# sift: $SIFT, else `sift` on PATH, else the sift that created this project.
sift="${SIFT:-$(command -v sift || echo '{{sift}}')}"
"$sift" component new plugin.wat -o {{crate}}.wasm
