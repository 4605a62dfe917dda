#!/usr/bin/env bash
# Builds the JavaScript GpuModel example into a component.
# Output: target/examples/gpu_model_js.wasm
#
# Toolchain: componentize-qjs from npm, pinned in package.json and
# package-lock.json and installed into ./node_modules. Its platform package
# (@andreiltd/componentize-qjs-binding-*) is a native Node addon holding
# QuickJS compiled to Wasm and the tools that bind it to the WIT world and
# snapshot the evaluated module: no Rust, no Wasm SDK, nothing else fetched.
#
# `npm install --no-save` rather than `npm ci`: componentize-qjs 0.4.5 lists
# optional platform packages that were never published (linux-arm64-musl,
# win32-*), so the lockfile cannot hold them and `npm ci` rejects it as out
# of sync. `npm install` still installs exactly the locked versions and
# checks their integrity hashes; --no-save leaves package-lock.json alone.
#
# --sync: the default runtime uses the component-model async ABI
# (task.cancel, ...), which sift's engine does not enable; such a
# component fails to load ("requires the component model async feature").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$here"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: needs Node.js and npm (tested with Node.js 20), e.g. from nodejs.org or Debian's nodejs and npm" >&2
  exit 1
fi
want="$(node -p 'require("./package.json").devDependencies["componentize-qjs"]')"
have="$(node -p 'require("./node_modules/componentize-qjs/package.json").version' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error
fi
out="$root/target/examples"
mkdir -p "$out"
"$here/node_modules/.bin/componentize-qjs" --sync \
  --wit "$root/wit/0.1.0" --world predicate-plugin \
  --js "$here/gpu_model.js" -o "$out/gpu_model_js.wasm" >/dev/null
echo "built $out/gpu_model_js.wasm"
