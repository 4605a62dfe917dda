#!/usr/bin/env bash
# Builds a JavaScript plugin into a component with componentize-qjs (npm),
# against sift's contract and this SDK (sift.js, beside this script).
#
#   build.sh APP_JS WIT_DIR OUTPUT
#
# APP_JS imports the SDK as "./sift.js" and exports what
# `sift.exportPlugin` returns; WIT_DIR is the contract (wit/0.7.0 in sift's
# tree, wit/ in a `sift new` project).
#
# Toolchain: componentize-qjs, pinned in package.json and package-lock.json
# beside this script and installed into its node_modules. Its platform
# package (@andreiltd/componentize-qjs-binding-*) is a native Node addon
# holding QuickJS compiled to Wasm and the tools that bind it to the WIT
# world and snapshot the evaluated module: no Rust, no Wasm SDK, nothing
# else fetched.
#
# `npm install --no-save` rather than `npm ci`: componentize-qjs 0.4.5 lists
# optional platform packages that were never published (linux-arm64-musl,
# win32-*), so the lockfile cannot hold them and `npm ci` rejects it as out
# of sync. `npm install` still installs exactly the locked versions and
# checks their integrity hashes; --no-save leaves package-lock.json alone.
#
# --sync: the default runtime uses the component-model async ABI
# (task.cancel, ...), which sift's engine does not enable; such a component
# fails to load ("requires the component model async feature").
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 APP_JS WIT_DIR OUTPUT" >&2
  exit 2
fi
sdk="$(cd "$(dirname "$0")" && pwd)"
app="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
wit="$(cd "$2" && pwd)"
out="$(mkdir -p "$(dirname "$3")" && cd "$(dirname "$3")" && pwd)/$(basename "$3")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: needs Node.js and npm (tested with Node.js 20), e.g. from nodejs.org or Debian's nodejs and npm" >&2
  exit 1
fi
cd "$sdk"
want="$(node -p 'require("./package.json").devDependencies["componentize-qjs"]')"
have="$(node -p 'require("./node_modules/componentize-qjs/package.json").version' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error
fi
# The app's modules and the SDK side by side, so that "./sift.js" (and the
# app's own "./x.js") resolve as they do in a `sift new` project.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp "$(dirname "$app")"/*.js "$stage/"
cp "$sdk/sift.js" "$stage/sift.js"
mkdir -p "$(dirname "$out")"
"$sdk/node_modules/.bin/componentize-qjs" --sync \
  --wit "$wit" --world plugin --module-root "$stage" \
  --js "$stage/$(basename "$app")" -o "$out" >/dev/null
