#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm
#
# componentize-qjs (npm, pinned in package.json and package-lock.json)
# evaluates plugin.js (with sift.js, sift's JavaScript SDK) in QuickJS at
# build time and snapshots it into a component of the contract's world.
# `npm install` rather than `npm ci`: componentize-qjs lists optional
# platform packages that were never published, so `npm ci` rejects its
# lockfile. --sync: sift does not enable the component model's async ABI.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: needs Node.js and npm (tested with Node.js 20), e.g. from nodejs.org or Debian's nodejs and npm" >&2
  exit 1
fi
[ -x node_modules/.bin/componentize-qjs ] ||
  npm install --no-save --no-audit --no-fund --loglevel=error
node_modules/.bin/componentize-qjs --sync --wit wit --world plugin \
  --js plugin.js -o {{crate}}.wasm >/dev/null
echo "built {{crate}}.wasm"
