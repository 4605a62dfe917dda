#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm
set -euo pipefail
cd "$(dirname "$0")"
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build --release --target wasm32-wasip2
cp target/wasm32-wasip2/release/{{crate}}.wasm {{crate}}.wasm
echo "built {{crate}}.wasm"
