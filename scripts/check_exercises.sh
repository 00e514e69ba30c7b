#!/usr/bin/env bash
# Checks every code exercise (exercises/*/) both ways, so none can rot:
#  1. on the project's code, each of the exercise's tests passes;
#  2. on the copy `make exercise N` would prepare (its piece cut out, the stubs in, the
#     marker lines gone), the code is rustfmt-clean, compiles without new warnings, and
#     each of its tests fails.
# A marker that no longer pairs with exercise.conf, a stub that no longer compiles, a
# renamed test or a test that stops detecting the missing piece fails the check with
# what to fix. Run by `make test`; `make check-exercises` alone (scripts/check_exercises.sh N
# checks exercise N only).
#
# The copy is kept in target/exercises/check between runs and rewritten file by file
# (only what changes), and it builds in the project's target directory with the
# project's compiled dependencies: only the pgasync crate is recompiled, incrementally
# (CARGO_INCREMENTAL=1 here even under make, which turns it off: the copies of the
# exercises differ by a piece each, so each copy after the first recompiles little), and
# with cargo's features as `cargo test --workspace` resolves them, as the project's code
# is tested (step 1 below): resolved for the pgasync package alone, the copy compiled
# eight dependencies again (futures-util, proptest, js-sys, wasm-bindgen-test...) and
# the next exercise's step 1 recompiled the project's library and suite (issue 20).
# For that the copy builds its library as an rlib only (all the tests link): the
# project's cdylib makes cargo name the library libpgasync.rlib without a hash, so the
# two trees would overwrite each other's library. (Should Cargo.toml's crate-type line
# change, the copy builds in a target directory of its own: right, only slower.)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"
if [[ -f .exercise ]]; then
  echo "check-exercises: this is the prepared copy of exercise $(cat .exercise): nothing to check here"
  echo "(scripts/exercise.sh test runs its tests)"
  exit 0
fi
WORK=$ROOT/target/exercises/check
LOGS=$ROOT/target/exercises/logs
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
EXERCISE=scripts/exercise.sh
mkdir -p "$LOGS"
exec 9>"$ROOT/target/exercises/.lock"
flock 9 # one check at a time on the copy
rm -rf "$WORK/.cargo" # left by an earlier version of this script

say() { echo "check-exercises: $*"; }

# The compiler warnings of a log, one per line, with where they are.
warnings() {
  awk '/^warning: / && !/generated [0-9]+ warning/ { w = $0; next }
       w != "" && /^ *--> / { print w " at " $2; w = "" }' "$1" | sort -u
}

start=$SECONDS
failed=()
exercises=("$@") # scripts/check_exercises.sh [N...]: only these
((${#exercises[@]})) || mapfile -t exercises < <("$EXERCISE" names)
for ex in "${exercises[@]}"; do
  ex=$("$EXERCISE" resolve "$ex")
  t0=$SECONDS
  # 1. The project's code: every test of the exercise passes. With cargo's features as
  # `cargo test --workspace` (make test's native build) resolves them: `cargo test --test
  # suite` alone resolves the shared dependencies without the CLI's features, and so
  # compiled the library and the suite again, over the workspace's build (the cdylib's
  # file names carry no hash): ~45 s here, and ~15 s more for the next workspace build.
  rc=0
  "$EXERCISE" test "$ex" --expect pass --log "$LOGS/$ex.project.log" --workspace || rc=$?
  if ((rc)); then
    say "$ex: FAILED on the project's code (log: ${LOGS#"$ROOT"/}/$ex.project.log)"
    failed+=("$ex")
    continue
  fi
  # 2. The prepared copy: it compiles, and every test of the exercise fails.
  if ! "$EXERCISE" sync "$ex" "$WORK"; then
    say "$ex: FAILED: the piece cannot be cut out of the project (see above)"
    failed+=("$ex")
    continue
  fi
  if sed -i 's/^crate-type = \["cdylib", "rlib"\]$/crate-type = ["rlib"]/' "$WORK/Cargo.toml" &&
    grep -q '^crate-type = \["rlib"\]$' "$WORK/Cargo.toml"; then
    copy_target=$CARGO_TARGET_DIR
  else
    copy_target=$ROOT/target/exercises/target
    say "(Cargo.toml's crate-type line is not the one this script expects: the copy builds in"
    say "${copy_target#"$ROOT"/}, compiling the dependencies once more; see the comment in $0)"
  fi
  if ! (cd "$WORK" && cargo fmt --all -- --check >"$LOGS/$ex.fmt.log" 2>&1); then
    say "$ex: FAILED: the prepared copy is not rustfmt-clean (${LOGS#"$ROOT"/}/$ex.fmt.log): format the stubs"
    say "in exercises/$ex/, or the code around a marker so that it stays formatted without the marker lines"
    failed+=("$ex")
    continue
  fi
  rc=0
  (cd "$WORK" && CARGO_TARGET_DIR=$copy_target CARGO_INCREMENTAL=1 \
    "$EXERCISE" test "$ex" --expect fail --log "$LOGS/$ex.copy.log" --workspace) || rc=$?
  case $rc in
    0) ;;
    1) say "$ex: FAILED: the tests marked above pass without the piece: they no longer detect it (did the code move out of its markers?)" ;;
    2) say "$ex: FAILED: the prepared copy does not compile: the stubs in exercises/$ex/ no longer fit the code around them" ;;
    *) say "$ex: FAILED on the prepared copy (see above)" ;;
  esac
  if ((rc)); then
    say "(the copy: ${WORK#"$ROOT"/}/, its log: ${LOGS#"$ROOT"/}/$ex.copy.log)"
    failed+=("$ex")
    continue
  fi
  added=$(comm -13 <(warnings "$LOGS/$ex.project.log") <(warnings "$LOGS/$ex.copy.log"))
  if [[ -n $added ]]; then
    say "$ex: FAILED: the prepared copy compiles with warnings the project does not have (the stubs"
    say "in exercises/$ex/ should leave none; log: ${LOGS#"$ROOT"/}/$ex.copy.log):"
    echo "$added"
    failed+=("$ex")
    continue
  fi
  n=$(grep -c '^test ' "exercises/$ex/exercise.conf")
  say "$ex: ok, its $n tests pass on the project and fail without the piece ($((SECONDS - t0)) s)"
done
if ((${#failed[@]})); then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "all exercises ok ($((SECONDS - start)) s)"
