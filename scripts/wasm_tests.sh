#!/usr/bin/env bash
# `make test-wasm`: the library's unit tests and the core's suite (tests/suite) on wasm32,
# in Node and in headless Chrome, from one build.
#
#   scripts/wasm_tests.sh LOGS [build|run|all]     (default all)
#
# build: `cargo test --target wasm32-unknown-unknown --profile wasm-test --lib --no-run`;
#   on wasm32 the suite is compiled into the library's unit-test binary (crate/lib.rs, its
#   last lines), so the library is compiled once, with its tests (wasm-pack test's `cargo
#   build --tests` compiled it a second time, without them, for the suite to link: a
#   third of that build; issue 20). Cargo's output is in LOGS/wasm-cargo.log.
# run: that one module run by wasm-bindgen's test runner (setup.sh installs it with
#   Cargo.lock's wasm-bindgen version, and chromedriver) in Node and in headless Chrome
#   side by side, each host's output whole in LOGS/node.log and LOGS/chrome.log.
#
# Chrome runs the tests in a dedicated worker (WASM_BINDGEN_USE_DEDICATED_WORKER), not
# on the page's main thread. Why: wasm-bindgen-test runs every test that completes
# without awaiting within one poll of its executor (its ExecuteTests future), and none
# of ours awaits, so on the main thread the whole run was one task: the renderer
# answered none of chromedriver's requests until the last test had ended. The runner
# reads the page's output through such a request (WebDriver's execute script), which
# chromedriver gives up after its 30 s script timeout: "Timed out receiving message
# from renderer: 30.000" whenever a binary's run took longer than 30 s (the single
# module's run, ~40 s, failed so; commit f29f9b1). In a worker the tests run off the
# main thread, which stays free to answer however long the run takes (bounded by
# WASM_BINDGEN_TEST_TIMEOUT). Measured on one module (2026-12-05, a 2-core machine at
# load ~18): on the main thread no test line came out, then chromedriver's "Timed out
# receiving message from renderer: 30.000" and the runner's "missing field `chunk`";
# in a worker the lines streamed and the 312 tests passed (226 s and 323 s, two runs).
#
# Invariants: both hosts run the same module; the run fails if either host fails, runs
# no test, or runs another number of tests than the other.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=${1:?usage: scripts/wasm_tests.sh LOGS [build|run|all]}
WHAT=${2:-all}
mkdir -p "$LOGS"
export PATH=$HOME/.cargo/bin:$PATH
WASM_TESTS=(--target wasm32-unknown-unknown --profile wasm-test --lib)
passed() { awk '/^test result: ok\./ { n += $4 } END { print n + 0 }' "$1"; }

if [[ $WHAT == build || $WHAT == all ]]; then
  cargo test "${WASM_TESTS[@]}" --no-run 2>&1 | tee "$LOGS/wasm-cargo.log"
  ((PIPESTATUS[0] == 0)) || exit 1
fi
[[ $WHAT == build ]] && exit 0

# The module cargo built ("Executable unittests crate/lib.rs (target/…/pgasync-….wasm)").
wasm=$(sed -n 's/^ *Executable .*(\(.*\.wasm\))$/\1/p' "$LOGS/wasm-cargo.log" | tail -n 1)
if [[ -z $wasm || ! -f $wasm ]]; then
  echo "wasm tests: no test module named in $LOGS/wasm-cargo.log"
  exit 1
fi
echo "wasm tests: $wasm in Node and in headless Chrome (a dedicated worker), side by side"
WASM_BINDGEN_TEST_ONLY_NODE=1 wasm-bindgen-test-runner "$wasm" >"$LOGS/node.log" 2>&1 &
node_pid=$!
WASM_BINDGEN_TEST_ONLY_WEB=1 WASM_BINDGEN_USE_DEDICATED_WORKER=1 WASM_BINDGEN_TEST_TIMEOUT=600 \
  CHROMEDRIVER=$(command -v chromedriver) wasm-bindgen-test-runner "$wasm" >"$LOGS/chrome.log" 2>&1
chrome_rc=$?
wait "$node_pid"
node_rc=$?
echo "---- Node ($LOGS/node.log)"
cat "$LOGS/node.log"
echo "---- headless Chrome ($LOGS/chrome.log)"
cat "$LOGS/chrome.log"
node=$(passed "$LOGS/node.log")
chrome=$(passed "$LOGS/chrome.log")
echo "wasm tests: $node in Node, $chrome in Chrome"
if ((node_rc || chrome_rc)); then
  echo "wasm tests: FAILED (Node's exit $node_rc, Chrome's $chrome_rc)"
  exit 1
fi
if [[ $node == 0 || $node != "$chrome" ]]; then
  echo "wasm tests: Node and Chrome must run the same tests, and some"
  exit 1
fi
