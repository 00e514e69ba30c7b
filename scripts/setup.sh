#!/usr/bin/env bash
# Installs what `make test` and `make demo` need, skipping whatever is already there: each
# step checks its versions or files first, so a set-up machine passes through in a second.
#
# On a fresh machine one step is slow: compiling wasm-bindgen-cli (wasm-bindgen, the
# JavaScript glue of `make pkg`'s modules, and wasm-bindgen-test-runner, which runs the
# wasm32 tests), the only tool compiled (`make pkg` calls cargo and wasm-bindgen itself:
# wasm-pack, a second compile of about as long, is not needed). Everything else is a
# download and runs beside that compile, each step in the background with its output in
# target/setup/STEP.log: Debian's packages in one apt-get call, the e2e's npm packages,
# the wasm32 target, the project's crates (`cargo fetch`), and, when `make test` asks
# for it (SETUP_BUILD), the project's first build, which fills the cores the tool's
# compile leaves idle. Each step's wall time and CPU are printed.
#
# The tool is compiled without optimisation, without TLS (its test runner talks to
# ChromeDriver over plain HTTP on 127.0.0.1) and without wasm2es6js. Measured (issue 20,
# 2026-12-05, fresh CARGO_HOME, CPU = user + system): setup.sh's two compiles before,
# wasm-pack 0.15.1 214 s and wasm-bindgen-cli as released (opt-level 3, TLS) 281 s; this
# one at opt-level 1 223 s, at opt-level 0 98 s. Its output is byte for byte the same;
# wasm-bindgen's own CPU, opt-level 0 / 1 / 3: the editor's module (5.5 MB) 2.0 / 0.6 /
# 0.55 s, the wasm32 test module (15.6 MB) 5.3 / 1.6 / 1.5 s: ~10 s more CPU per `make
# test` (four runs: two modules, the test module in Node and in Chrome, those two side by
# side), against ~2 minutes less to compile. Its version is Cargo.lock's `wasm-bindgen`:
# the glue and the library must agree.
set -uo pipefail
cd "$(dirname "$0")/.."

CARGO_BIN=${CARGO_HOME:-$HOME/.cargo}/bin
export PATH="$CARGO_BIN:$PATH"
WASM_BINDGEN_VERSION=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)
LOGS=$PWD/target/setup

say() { echo "setup: $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "setup: need root to run: $*" >&2; return 1; fi
}

# step NAME COMMAND...: runs COMMAND in the background, its output in $LOGS/NAME.log;
# `finish` waits for every step and says how long each took.
names=() pids=()
step() {
  local name=$1
  shift
  mkdir -p "$LOGS"
  say "$name: started (log: ${LOGS#"$PWD"/}/$name.log)"
  (
    start=$(date +%s%N)
    "$@" >"$LOGS/$name.log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    # `times`' second line: the CPU (user, system) of this subshell's children (not in
    # a command substitution: that is another subshell, without them).
    times >"$LOGS/$name.times"
    echo "$rc $ms $(tail -n 1 "$LOGS/$name.times")" >"$LOGS/$name.rc"
    exit "$rc"
  ) &
  names+=("$name")
  pids+=($!)
}
finish() {
  local failed=0 i rc ms user sys
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    read -r rc ms user sys <"$LOGS/${names[$i]}.rc"
    if [ "$rc" = 0 ]; then
      say "${names[$i]}: done in $((ms / 1000)).$((ms % 1000 / 100)) s (CPU: user $user, system $sys)"
    else
      say "${names[$i]}: FAILED (exit $rc) after $((ms / 1000)) s; the end of $LOGS/${names[$i]}.log:" >&2
      tail -n 20 "$LOGS/${names[$i]}.log" >&2
      failed=1
    fi
  done
  return $failed
}

# Debian's packages, in one apt-get call (one dependency resolution, one download); the
# package lists are updated only if the install fails without.
apt=()
command -v chromium >/dev/null && command -v chromedriver >/dev/null || apt+=(chromium chromium-driver)
# PostgreSQL 15's server binaries: tests start their own clusters on free ports.
{ ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null; } || apt+=(postgresql)
command -v node >/dev/null && command -v npm >/dev/null || apt+=(nodejs npm)
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y "$@" || { as_root apt-get update && as_root apt-get install -y "$@"; }
}

# playwright-core (end-to-end tests) and binaryen's wasm-opt (Debian's is too old).
npm_ci() { (cd tests/e2e && npm ci --no-audit --no-fund); }
need_npm=
[ -d tests/e2e/node_modules/playwright-core ] && [ -x tests/e2e/node_modules/.bin/wasm-opt ] || need_npm=1

# Node comes with the apt step when missing: then npm waits for it.
apt_then_npm() { apt_install "${apt[@]}" && { [ -z "$need_npm" ] || npm_ci; }; }
if [ ${#apt[@]} -gt 0 ] && [[ " ${apt[*]} " == *" npm "* ]]; then
  say "installing ${apt[*]} (Debian's), then the e2e's npm packages"
  step apt-npm apt_then_npm
  need_npm=
elif [ ${#apt[@]} -gt 0 ]; then
  say "installing ${apt[*]} (Debian's)"
  step apt apt_install "${apt[@]}"
fi
[ -z "$need_npm" ] || step npm npm_ci

rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$' ||
  step wasm32-target rustup target add wasm32-unknown-unknown

have() { [ "$("$1" --version 2>/dev/null | awk '{print $2}')" = "$WASM_BINDGEN_VERSION" ]; }
if ! have wasm-bindgen || ! have wasm-bindgen-test-runner; then
  say "compiling wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 100 s of CPU; the downloads beside it)"
  # The project's crates while the tool compiles; its own first build if make asks.
  step crates cargo fetch
  # Not --locked: its lock file pins a webpki-roots version the registry lacks.
  step wasm-bindgen-cli env CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --no-default-features \
    --bin wasm-bindgen --bin wasm-bindgen-test-runner
  # shellcheck disable=SC2086 # SETUP_BUILD is a command line
  [ -z "${SETUP_BUILD:-}" ] || step build $SETUP_BUILD
fi

if [ ${#pids[@]} -gt 0 ]; then
  finish || exit 1
fi
say "ok"
