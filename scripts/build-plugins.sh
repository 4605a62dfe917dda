#!/usr/bin/env bash
# Builds the bundled filter plugins as WebAssembly components into
# target/plugins/, where `sift` looks for them by default.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-wasip2
plugins=(node-unschedulable node-name taint-toleration node-affinity node-ports node-resources-fit volume-restrictions node-volume-limits volume-binding volume-zone node-resources-balanced-allocation image-locality pod-topology-spread inter-pod-affinity dynamic-resources node-declared-features gpu-model gpu-share fgd-score best-fit-score random-score dot-prod-score gpu-packing-score gpu-clustering-score label-match)
args=()
for p in "${plugins[@]}"; do args+=(-p "sift-plugin-$p"); done
# Test plugins are built beside them, into target/test-plugins/.
tests=(runtime-class reserve-probe minimal-filter)
for p in "${tests[@]}"; do args+=(-p "sift-test-plugin-$p"); done
cargo build --quiet --profile plugin --target wasm32-wasip2 "${args[@]}"
mkdir -p target/plugins
for p in "${plugins[@]}"; do
  cp "target/wasm32-wasip2/plugin/sift_plugin_${p//-/_}.wasm" target/plugins/
done
mkdir -p target/test-plugins
for p in "${tests[@]}"; do
  cp "target/wasm32-wasip2/plugin/sift_test_plugin_${p//-/_}.wasm" target/test-plugins/
done
echo "built ${#plugins[@]} plugins into target/plugins/ and ${#tests[@]} into target/test-plugins/"
