#!/usr/bin/env bash
# Builds the Python GpuModel example into a component with componentize-py
# (PyPI). Output: target/examples/gpu_model_python.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
out="$root/target/examples"
mkdir -p "$out"
# componentize-py lives in a virtualenv under target/: the system's Python
# is left alone (Debian's refuses pip installs outright).
venv="$out/python-venv"
# A virtualenv whose pip does not run (moved, or made by another Python) is
# made again.
if ! "$venv/bin/pip" --version >/dev/null 2>&1 && ! python3 -m venv --clear "$venv"; then
  echo "error: cannot create a Python virtualenv in $venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==0.25.1"
cd "$here"
"$venv/bin/componentize-py" -d "$root/wit/0.1.0" -w predicate-plugin componentize app -o "$out/gpu_model_python.wasm"
echo "built $out/gpu_model_python.wasm"
