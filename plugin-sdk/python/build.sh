#!/usr/bin/env bash
# Builds a Python plugin into a component with componentize-py (PyPI),
# against sift's contract and this SDK (sift.py, beside this script).
#
#   build.sh APP_DIR WIT_DIR OUTPUT [VENV]
#
# APP_DIR holds app.py, the module that ends with
# `Predicate, Scorer, Reserver = sift.export(...)`; WIT_DIR the contract
# (wit/0.7.0 in sift's tree, wit/ in a `sift new` project). componentize-py
# lives in a virtualenv, VENV (default APP_DIR/.venv): the system's Python
# is left alone (Debian's refuses pip installs outright).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 APP_DIR WIT_DIR OUTPUT [VENV]" >&2
  exit 2
fi
sdk="$(cd "$(dirname "$0")" && pwd)"
app="$(cd "$1" && pwd)"
wit="$2"
out="$3"
venv="${4:-$app/.venv}"
# A virtualenv whose pip does not run (moved, or made by another Python) is
# made again.
if ! "$venv/bin/pip" --version >/dev/null 2>&1 && ! python3 -m venv --clear "$venv"; then
  echo "error: cannot create a Python virtualenv in $venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==0.25.1"
mkdir -p "$(dirname "$out")"
# The app's directory first: its modules win over the SDK's.
"$venv/bin/componentize-py" -d "$wit" -w plugin componentize -p "$app" -p "$sdk" app -o "$out" >/dev/null
