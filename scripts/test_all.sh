#!/usr/bin/env bash
# `make test`: every test and check of the project (the native tests, the exercises,
# the wasm32 tests in Node and in Chrome, the e2e and the workshop kit), with the steps
# that compute running while the ones that wait are waiting.
#
#   scripts/test_all.sh        (after `make setup`; `make test` does both)
#
# Why: the three parts ran one after the other (make test-native, test-wasm, test-e2e:
# 17m51s from a clean clone on a 2-core machine, of which 20m50s of CPU: the cores were
# half idle). The native tests mostly wait on their PostgreSQL clusters, while the wasm
# builds are CPU-bound (and the page's release build spends its LTO on one core).
#
# The steps, in three lanes run side by side (each lane's steps one after the other):
#   1. native build (`cargo test --workspace --no-run`) → native tests
#      (scripts/native_tests.mjs) → exercises (scripts/check_exercises.sh)
#   2. pkg (`make pkg`: the two release wasm modules) → e2e (tests/e2e/run.mjs, which
#      also waits for the native build: it drives the CLI's debug build) → workshop kit
#   3. wasm (scripts/wasm_tests.sh: one wasm32 test build, run in Node and in Chrome
#      side by side)
# Lanes 1 and 2 start at once (the native tests and the e2e are the two long chains),
# lane 3 when the native build has ended (it has the most slack; three builds at once
# would only delay the native tests' start). No step is run at a lower priority (nice):
# on a machine shared with other work, a niced build waited behind everyone else's
# (measured: a niced wasm32 build at 1-2% of a core for minutes, at load ~20). Every
# step runs whatever happens to the others, except a step whose inputs failed (the
# tests after a failed build).
#
# Invariants:
# - the same steps and commands as test-native, test-wasm and test-e2e (the Makefile;
#   those targets still run a part alone), so the same tests and checks run;
# - each step's output is whole in target/test-logs/STEP.log (native.log, node.log,
#   chrome.log, e2e.log keep their names: the counts are read from them as before);
# - the terminal gets one line per step (its start, its end and minutes), a failed
#   step's log tail, and at the end the counts line, each step's time and the total;
# - the exit status is 0 only if every step passed and the counts are sane (some tests
#   in each part, as many in Chrome as in Node).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$HOME/.cargo/bin:$PATH
LOGS=$PWD/target/test-logs # absolute: a step may change directory (the e2e's)
mkdir -p "$LOGS"
rm -f "$LOGS"/*.rc "$LOGS"/*.secs "$LOGS"/*.cpu "$LOGS"/*.times
T0=$SECONDS

mmss() { printf '%dm%02ds' $((${1:-0} / 60)) $((${1:-0} % 60)); }
say() { echo "make test [$(mmss $((SECONDS - T0)))] $*"; }

# step NAME CMD...: runs CMD with its output in
# $LOGS/NAME.log; records its exit status ($LOGS/NAME.rc), its seconds ($LOGS/NAME.secs)
# and the CPU its processes used (user + system, whole seconds: $LOGS/NAME.cpu), which
# says how much of the step computes and how much waits.
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  say "$name: started"
  (
    "$@"
    rc=$?
    # `times`' second line: the user and system time of the subshell's children. Into a
    # file, not a pipe: a pipeline's `times` runs in a child, which has no children.
    times >"$LOGS/$name.times"
    awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
      printf "%d\n", t }' "$LOGS/$name.times" >"$LOGS/$name.cpu"
    exit "$rc"
  ) >"$LOGS/$name.log" 2>&1 || rc=$?
  echo $((SECONDS - start)) >"$LOGS/$name.secs"
  echo "$rc" >"$LOGS/$name.rc"
  local took
  took="$(mmss $((SECONDS - start))) (CPU $(mmss "$(cat "$LOGS/$name.cpu" 2>/dev/null || echo 0)"))"
  if ((rc)); then
    say "$name: FAILED (exit $rc) after $took; the end of $LOGS/$name.log:"
    tail -n 60 "$LOGS/$name.log" | sed 's/^/    /'
  else
    say "$name: ok in $took"
  fi
  return "$rc"
}

# after NAME: waits until step NAME has ended; fails if it failed.
after() {
  while [[ ! -f $LOGS/$1.rc ]]; do sleep 1; done
  [[ $(cat "$LOGS/$1.rc") == 0 ]]
}

# A step not run because what it needs failed.
skipped() {
  echo skipped >"$LOGS/$1.rc"
  say "$1: not run ($2 failed)"
}

# The commands of each step (the Makefile's targets test-native, test-wasm, test-e2e).
native_build() { cargo test --workspace --no-run; }
native_tests() { node scripts/native_tests.mjs "$LOGS/native.log"; }
wasm_build() { ./scripts/wasm_tests.sh "$LOGS" build; }
wasm_tests() { ./scripts/wasm_tests.sh "$LOGS" run; } # writes node.log and chrome.log
e2e() { cd tests/e2e && PGASYNC_BIN=../../target/debug/pgasync node run.mjs; }
workshop() {
  WORKSHOP_CODE=0 ./scripts/workshop.sh target/workshop-e2e &&
    (cd tests/e2e && WORKSHOP_DIR=../../target/workshop-e2e node workshop.mjs)
}

say "checking the formatting"
cargo fmt --all -- --check || exit 1

lane_native() {
  step native-build native_build || { skipped native-tests native-build; skipped exercises native-build; return; }
  # native_tests.mjs's own compile finds everything built; its log is native.log (the
  # binaries' outputs, for the counts), its terminal lines native-tests.log.
  step native-tests native_tests
  step exercises ./scripts/check_exercises.sh
}
lane_e2e() {
  step pkg make --no-print-directory pkg || { skipped e2e pkg; skipped workshop pkg; return; }
  after native-build || { skipped e2e native-build; skipped workshop native-build; return; }
  step e2e e2e
  step workshop workshop
}
lane_wasm() {
  after native-build || true
  step wasm-build wasm_build || { skipped wasm wasm-build; return; }
  step wasm wasm_tests
}

rm -f "$LOGS/native.log" "$LOGS/node.log" "$LOGS/chrome.log" "$LOGS/e2e.log"
lane_native &
lane_e2e &
lane_wasm &
wait

# The counts, as the Makefile's test-native/test-wasm/test-e2e print them.
passed() { [[ -f $1 ]] && awk '/^test result: ok\./ { n += $4 } END { print n + 0 }' "$1" || echo 0; }
native=$(passed "$LOGS/native.log")
node=$(passed "$LOGS/node.log")
chrome=$(passed "$LOGS/chrome.log")
e2e=$(sed -n 's/^PASS: \([0-9]*\) checks.*/\1/p' "$LOGS/e2e.log" 2>/dev/null)
secs() {
  [[ -f $LOGS/$1.secs ]] || { echo -; return; }
  echo "$(mmss "$(cat "$LOGS/$1.secs")")/CPU $(mmss "$(cat "$LOGS/$1.cpu" 2>/dev/null)")"
}
times="native build $(secs native-build), tests $(secs native-tests), exercises $(secs exercises);"
times+=" wasm build $(secs wasm-build), Node and Chrome $(secs wasm);"
times+=" pkg $(secs pkg), e2e $(secs e2e), workshop $(secs workshop)"

failed=()
for s in native-build native-tests exercises wasm-build wasm pkg e2e workshop; do
  [[ $(cat "$LOGS/$s.rc" 2>/dev/null) == 0 ]] || failed+=("$s")
done
if ((native == 0 || node == 0 || node != chrome)) && ((${#failed[@]} == 0)); then
  echo "make test: the counts are wrong: $native native, $node in Node, $chrome in Chrome" \
    "(some in each, and Node and Chrome must run the same tests)"
  failed+=(counts)
fi
if ((${#failed[@]})); then
  echo "make test: FAILED: ${failed[*]} (logs in $LOGS/); $times; in $(mmss $((SECONDS - T0)))"
  exit 1
fi
echo "make test: all passed: $native tests natively, $node in Node, $chrome in Chrome (wasm32)," \
  "${e2e:-?} e2e checks and the workshop kit's; in $(mmss $((SECONDS - T0))) (steps side by side: $times)"
