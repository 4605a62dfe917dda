#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm (componentize-py from PyPI).
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install --quiet componentize-py==0.25.1
componentize-py -d wit -w predicate-plugin componentize app -o {{crate}}.wasm
echo "built {{crate}}.wasm"
