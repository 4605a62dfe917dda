#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm (componentize-py from PyPI), from
# app.py and sift.py (sift's Python SDK) against wit/.
set -euo pipefail
cd "$(dirname "$0")"
# componentize-py lives in this project's virtualenv (.venv): the system's
# Python is left alone (Debian's refuses pip installs outright).
venv=.venv
# A virtualenv whose pip does not run (moved, or made by another Python) is
# made again.
if ! "$venv/bin/pip" --version >/dev/null 2>&1 && ! python3 -m venv --clear "$venv"; then
  echo "error: cannot create a Python virtualenv in $venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check componentize-py==0.25.1
"$venv/bin/componentize-py" -d wit -w plugin componentize -p . app -o {{crate}}.wasm >/dev/null
echo "built {{crate}}.wasm"
