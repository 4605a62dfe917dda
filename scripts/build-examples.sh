#!/usr/bin/env bash
# Builds every example plugin under plugins/examples/ (each has a build.sh)
# into target/examples/. Each example installs its own toolchain from the
# package registries (see its build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for b in plugins/examples/*/build.sh; do
  echo "== $(dirname "$b")"
  bash "$b"
done
