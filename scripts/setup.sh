#!/usr/bin/env bash
# Installs what `make test` and `make demo` need, skipping whatever is already there
# (a set-up machine passes through in a second). Versions are pinned: wasm-pack uses
# the wasm-bindgen on PATH only when it equals the version in Cargo.lock.
set -euo pipefail

WASM_PACK_VERSION=0.15.1
WASM_BINDGEN_VERSION=0.2.130
export PATH="$HOME/.cargo/bin:$PATH"

say() { echo "setup: $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "setup: need root to run: $*" >&2; exit 1; fi
}

rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$' || {
  say "adding the wasm32-unknown-unknown target"; rustup target add wasm32-unknown-unknown; }

if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$WASM_PACK_VERSION" ]; then
  say "installing wasm-pack $WASM_PACK_VERSION (about 4 minutes)"
  cargo install --locked "wasm-pack@$WASM_PACK_VERSION"
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 4 minutes)"
  # Not --locked: its lock file pins a webpki-roots version the registry lacks.
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION"
fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing Chromium and ChromeDriver"
  as_root apt-get install -y chromium chromium-driver >/dev/null || {
    as_root apt-get update >/dev/null && as_root apt-get install -y chromium chromium-driver >/dev/null; }
fi

# PostgreSQL server binaries: tests start their own clusters on free ports.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v psql >/dev/null; then
  say "installing PostgreSQL"
  as_root apt-get install -y postgresql >/dev/null || {
    as_root apt-get update >/dev/null && as_root apt-get install -y postgresql >/dev/null; }
fi

command -v node >/dev/null && command -v npm >/dev/null || {
  say "installing Node.js"; as_root apt-get install -y nodejs npm >/dev/null; }

# playwright-core (end-to-end tests) and binaryen's wasm-opt (Debian's is too old).
if [ ! -d tests/e2e/node_modules/playwright-core ]; then
  say "installing the end-to-end test packages"
  (cd tests/e2e && npm ci --no-audit --no-fund --silent)
fi
say "ok"
