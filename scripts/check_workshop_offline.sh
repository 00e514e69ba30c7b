#!/usr/bin/env bash
# `make check-workshop-offline` (issue 19): the workshop kit's code exercises work on a
# laptop with no network. Builds the kit, copies its code/ as an attendee would get it,
# and there, with no network (a network namespace of its own: `unshare -n`) and no
# registry (an empty CARGO_HOME: no index, no downloaded crates, no config), runs
# `make exercise 1`, the exercise's tests (they fail: the bug is in), the fix (they
# pass), the bug again (they fail), timing each test run. A run after an edit must take
# less than LIMIT seconds (default 30).
#
#   scripts/check_workshop_offline.sh [WORK_DIR]     (default target/workshop-offline)
#
# Not part of `make test` (it builds the kit: about a minute); `make pkg` first.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
work=${1:-target/workshop-offline}
limit=${LIMIT:-30}
say() { echo "check-workshop-offline: $*"; }

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
t0=$SECONDS
WORKSHOP_CODE=1 ./scripts/workshop.sh "$work/kit" >"$work/kit.log" 2>&1 || { cat "$work/kit.log"; exit 1; }
say "kit built in $((SECONDS - t0)) s: $(grep '/code/ (' "$work/kit.log" | sed 's/^workshop: //')"

# The attendee's copy: the kit's code/ moved elsewhere (nothing points back at the
# project), a Cargo home with nothing in it.
laptop=$work/laptop
cp -a "$work/kit/code" "$laptop"
mkdir -p "$work/cargo-home"

# No network: a network namespace of its own (only a loopback that is down).
if unshare -n true 2>/dev/null; then
  offline=(unshare -n)
elif unshare -rn true 2>/dev/null; then
  offline=(unshare -rn)
else
  say "FAILED: cannot take the network away here (unshare -n): run as root or with user namespaces"
  exit 1
fi
run() { (cd "$laptop" && env CARGO_HOME="$work/cargo-home" "${offline[@]}" "$@"); }
run sh -c 'getent hosts index.crates.io >/dev/null 2>&1 && exit 1; exit 0' ||
  { say "FAILED: the network is still there"; exit 1; }

run make exercise 1 >"$work/prepare.log" 2>&1 || { cat "$work/prepare.log"; exit 1; }
ex=$laptop/exercise-1
[[ -f $ex/.exercise ]] || { say "FAILED: make exercise 1 made no exercise-1/"; exit 1; }
say "make exercise 1: exercise-1/ prepared (no network)"

# One run of the exercise's tests in exercise-1/: expect pass|fail; prints the seconds.
tests() {
  local expect=$1 log=$2 t
  t=$(date +%s.%N)
  (cd "$ex" && env CARGO_HOME="$work/cargo-home" "${offline[@]}" scripts/exercise.sh test --expect "$expect" --log "$log") ||
    { say "FAILED: the tests did not $expect (log: $log)"; tail -30 "$log"; exit 1; }
  echo "$(date +%s.%N) - $t" | bc
}

first=$(tests fail "$work/run1.log")
say "first run in the copy (compiles the crate; the bug in: the tests fail as they should): ${first} s"
# The fix: the project's own event_loop.rs (its marker lines are comments).
cp "$laptop/crate/executor/event_loop.rs" "$ex/crate/executor/event_loop.rs"
fixed=$(tests pass "$work/run2.log")
say "after the fix (an edit): the tests pass in ${fixed} s"
git -C "$ex" checkout -q -- crate/executor/event_loop.rs
broken=$(tests fail "$work/run3.log")
say "after breaking it again (an edit): the tests fail in ${broken} s"
for t in "$fixed" "$broken"; do
  if (($(echo "$t >= $limit" | bc))); then
    say "FAILED: a run after an edit took ${t} s (limit ${limit} s)"
    exit 1
  fi
done
say "ok: offline, no registry; after an edit the tests run in ${fixed} s and ${broken} s (limit ${limit} s); $(nproc) cores"
