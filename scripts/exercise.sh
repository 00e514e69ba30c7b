#!/usr/bin/env bash
# Code exercises (exercises/*/): a working copy of the project with one protocol piece
# removed, whose tests fail until the attendee writes the piece again.
#
#   scripts/exercise.sh [list]                  the exercises
#   scripts/exercise.sh prepare N [DIR]         `make exercise N`: a fresh copy in DIR
#                                               (default exercise-N/), instructions printed
#   scripts/exercise.sh test [N] [--expect pass|fail] [--log FILE] [--workspace]
#                                               runs exercise N's tests in this tree (in a
#                                               prepared copy N is known) and says which pass
#                                               (--workspace: cargo's dependency features
#                                               as `cargo test --workspace` resolves them,
#                                               so the project's test build is reused)
#   scripts/exercise.sh sync N DIR              makes DIR this tree with N's piece removed,
#                                               rewriting only the files that change
#                                               (scripts/check_exercises.sh builds it)
#   scripts/exercise.sh names                   the exercises' folder names, one a line
#   scripts/exercise.sh resolve N               the folder name of exercise N
#
# N is the number (2), the name (pending-request) or the folder (2-pending-request).
#
# An exercise is a folder exercises/N-NAME/ with README.md (the instructions) and
# exercise.conf, whose lines are
#   title TEXT
#   replace FILE STUB   the next region of the project's FILE from the line
#                       `// exercise:NAME begin` to the line `// exercise:NAME end` is
#                       replaced by the file STUB of the folder: code that compiles
#   test TARGET NAME    the test NAME of the test target TARGET (`cargo test --test TARGET`;
#                       the suite's are MODULE::TEST, e.g. suite async_protocol::…): it
#                       passes on the project's code and fails on the copy
# The copy keeps no marker line (those of other exercises are dropped, their code kept).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
EXERCISES=$ROOT/exercises
MARKER_RE='^[[:space:]]*// exercise:[a-z0-9-]+ (begin|end)[[:space:]]*$'
TEST_TIMEOUT=${EXERCISE_TEST_TIMEOUT:-300}

die() {
  echo "exercise: $*" >&2
  exit 1
}

# In the workshop kit (code/ with vendor/, or an exercise copy inside it), the fixed
# path its Cargo config reads the vendored crates from (/tmp/pgasync-workshop-vendor,
# see scripts/workshop.sh) is made to point at this kit's vendor/.
kit_vendor_link() {
  local d
  for d in "$ROOT" "$ROOT/.."; do
    if [[ -d $d/vendor && -f $d/.cargo/config.toml ]] && grep -q pgasync-workshop-vendor "$d/.cargo/config.toml"; then
      ln -sfn "$(cd "$d/vendor" && pwd -P)" /tmp/pgasync-workshop-vendor
      return
    fi
  done
}

# The exercises' folder names, in order.
names() {
  local d
  for d in "$EXERCISES"/*/; do
    [[ -f $d/exercise.conf ]] && basename "$d"
  done | sort -n
}

# The folder of exercise $1 (a number, a name or a folder name).
resolve() {
  local want=$1 ex
  for ex in $(names); do
    if [[ $ex == "$want" || ${ex%%-*} == "$want" || ${ex#*-} == "$want" ]]; then
      echo "$ex"
      return
    fi
  done
  die "no exercise \"$want\" (scripts/exercise.sh list shows them)"
}

# The values of the lines KEY of exercise $2's exercise.conf.
conf() {
  awk -v key="$1" '$1 == key { sub(/^[^ \t]+[ \t]+/, ""); print }' "$EXERCISES/$2/exercise.conf"
}

list() {
  local ex
  echo "The code exercises (make exercise N prepares exercise-N/ and prints its instructions):"
  for ex in $(names); do
    printf '  %-3s %-22s %s\n' "${ex%%-*}" "${ex#*-}" "$(conf title "$ex")"
  done
}

# The files of this tree, NUL-separated: what git tracks or would track (not ignored).
tree_files() {
  if [[ -d $ROOT/.git || -f $ROOT/.git ]]; then
    git -C "$ROOT" ls-files -z --cached --others --exclude-standard
  else
    (cd "$ROOT" && find . \( -path ./target -o -path ./.git -o -path ./.cargo -o -path ./vendor -o -path './exercise-*' \) -prune -o -type f -print0) |
      sed -z 's|^\./||'
  fi
}

# cut_regions FILE NAME [STUB...]: FILE on stdout with exercise NAME's regions replaced by
# the STUBs in order and every other marker line dropped.
cut_regions() {
  local file=$1 name=$2
  shift 2
  local IFS=$'\n'
  awk -v name="$name" -v stubs="$*" -v file="${file#"$ROOT"/}" -v known=" $(names | sed 's/^[0-9]*-//' | tr '\n' ' ')" '
    function fail(msg) {
      print "exercise: " file ":" NR ": " msg > "/dev/stderr"
      failed = 1
      exit 1
    }
    BEGIN { n = stubs == "" ? 0 : split(stubs, stub, "\n") }
    /^[ \t]*\/\/ exercise:[a-z0-9-]+ (begin|end)[ \t]*$/ {
      line = $0
      sub(/^[ \t]*\/\/ exercise:/, "", line)
      split(line, m, " ")
      if (index(known, " " m[1] " ") == 0) fail("\"// exercise:" m[1] "\": no exercise is called so (exercises/N-" m[1] "/)")
      if (m[1] != name) next
      if (m[2] == "begin") {
        if (inside) fail("\"// exercise:" name " begin\" inside a region of its own")
        inside = 1
        if (++k > n) fail("more \"// exercise:" name "\" regions than replace lines for this file in exercise.conf")
        while ((got = (getline l < stub[k])) > 0) print l
        if (got < 0) fail("cannot read " stub[k])
        close(stub[k])
      } else {
        if (!inside) fail("\"// exercise:" name " end\" without a begin")
        inside = 0
      }
      next
    }
    !inside { print }
    END {
      if (failed) exit 1
      if (inside) {
        print "exercise: " file ": \"// exercise:" name " begin\" without an end" > "/dev/stderr"
        exit 1
      }
      if (k < n) {
        print "exercise: " file ": exercise.conf replaces " n " region(s), the file marks " k " (\"// exercise:" name " begin\")" > "/dev/stderr"
        exit 1
      }
    }' "$file"
}

# sync EXERCISE DEST: DEST becomes this tree with the exercise's piece removed. Only files
# whose content differs are written, so cargo rebuilds only what changed.
sync_tree() {
  local ex=$1 dest=$2 name=${1#*-} file stub f want
  local -A stubs_of=() marked=() keep=()
  while read -r file stub; do
    [[ -n $file && -n $stub ]] || die "exercises/$ex/exercise.conf: \"replace FILE STUB\" expected"
    [[ $file == *.rs ]] || die "exercises/$ex/exercise.conf: replace $file: only Rust files carry markers"
    [[ -f $ROOT/$file ]] || die "exercises/$ex/exercise.conf: replace $file: the project has no such file"
    [[ -f $EXERCISES/$ex/$stub ]] || die "exercises/$ex/exercise.conf: replace $file $stub: no such file in exercises/$ex/"
    stubs_of[$file]+=$EXERCISES/$ex/$stub$'\n'
  done < <(conf replace "$ex")
  ((${#stubs_of[@]})) || die "exercises/$ex/exercise.conf: no replace line"
  [[ -n $(conf test "$ex") ]] || die "exercises/$ex/exercise.conf: no test line"
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd -P)
  [[ $dest != "$ROOT" ]] || die "will not cut the exercise out of the project itself"
  local stage
  stage=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: $stage is local
  trap "rm -rf '$stage'" EXIT
  while IFS= read -r -d '' f; do
    [[ -f $ROOT/$f ]] || continue # deleted, not yet committed
    keep[$f]=1
    want=$ROOT/$f
    if [[ $f == *.rs ]] && grep -qE "$MARKER_RE" "$want"; then
      marked[$f]=1
      mkdir -p "$(dirname "$stage/$f")"
      local stubs=()
      [[ -n ${stubs_of[$f]:-} ]] && mapfile -t stubs < <(printf '%s' "${stubs_of[$f]}")
      cut_regions "$want" "$name" "${stubs[@]}" >"$stage/$f" ||
        die "cannot prepare exercise $ex: the exercise markers in $f do not fit (see above): fix them, or exercises/$ex/exercise.conf"
      want=$stage/$f
    fi
    if ! cmp -s "$want" "$dest/$f"; then
      mkdir -p "$(dirname "$dest/$f")"
      cp "$want" "$dest/$f"
    fi
  done < <(tree_files)
  for f in "${!stubs_of[@]}"; do
    [[ -n ${marked[$f]:-} ]] ||
      die "$f has no \"// exercise:$name begin\" line, yet exercises/$ex/exercise.conf replaces a region of it"
  done
  # Files an earlier sync wrote that the tree no longer has.
  while IFS= read -r -d '' f; do
    f=${f#./}
    [[ -n ${keep[$f]:-} ]] || rm -f "$dest/$f"
  done < <(cd "$dest" && find . \( -path ./target -o -path ./.git -o -path ./.cargo \) -prune -o -type f ! -name .exercise -print0)
  [[ $(cat "$dest/.exercise" 2>/dev/null) == "$ex" ]] || echo "$ex" >"$dest/.exercise"
  rm -rf "$stage"
  trap - EXIT
}

prepare() {
  local ex=$1 dest=${2:-$ROOT/exercise-${1%%-*}}
  if [[ -e $dest ]]; then
    [[ ${FORCE:-} == 1 ]] || die "$dest exists (your work in it?): remove it, or FORCE=1 make exercise ${ex%%-*} to start over"
    [[ -f $dest/.exercise ]] || die "$dest is not a prepared exercise copy: not removing it"
    # Everything but the build directory, whose compiled dependencies are still good.
    find "$dest" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
  fi
  sync_tree "$ex" "$dest"
  kit_vendor_link
  dest=$(cd "$dest" && pwd -P)
  if command -v git >/dev/null; then
    git -C "$dest" init -q
    git -C "$dest" add -A
    git -C "$dest" -c user.name=exercise -c user.email=exercise@localhost commit -q -m "exercise $ex: the starting point"
  fi
  cat "$EXERCISES/$ex/README.md"
  local rel=${dest#"$PWD"/}
  echo
  echo "----------------------------------------------------------------------------"
  if [[ -d $dest/.git ]]; then
    echo "Your working copy: $rel/ (a git repository: \`git diff\` shows your changes)."
  else
    echo "Your working copy: $rel/"
  fi
  if [[ -d $ROOT/vendor && -d $ROOT/target/debug/deps ]]; then
    echo "Run the exercise's tests there (the workshop kit: the dependencies are compiled already,"
    echo "the first run compiles the crate, each run after an edit only what changed; no network):"
  else
    echo "Run the exercise's tests there (the first build compiles the dependencies, a few minutes):"
  fi
  echo
  echo "    cd $rel && scripts/exercise.sh test"
  echo
  echo "which runs:"
  test_commands "$ex" | sed 's/^/    /'
}

# The cargo commands that run the exercise's tests, one per test target.
test_commands() {
  local target
  for target in $(conf test "$1" | awk '!seen[$1]++ { print $1 }'); do
    echo "cargo test --test $target -- --exact $(conf test "$1" | awk -v t="$target" '$1 == t { printf "%s%s", sep, $2; sep = " " }')"
  done
}

# test [N] [--expect pass|fail] [--log FILE]: runs the exercise's tests in this tree.
# Exit 0 if every test did as expected (default: pass), 1 if not, 2 if the tree does not
# compile, 3 if a test is missing or the run timed out.
run_tests() {
  local ex="" expect="" log="" quiet=0 scope=()
  while (($#)); do
    case $1 in
      --expect) expect=$2; shift 2 ;;
      --log) log=$2; shift 2 ;;
      --workspace) scope=(--workspace); shift ;;
      -*) die "test: unknown option $1" ;;
      *) ex=$(resolve "$1"); shift ;;
    esac
  done
  if [[ -z $ex ]]; then
    [[ -f $ROOT/.exercise ]] || die "test: which exercise? (scripts/exercise.sh test N; the list: scripts/exercise.sh list)"
    ex=$(resolve "$(cat "$ROOT/.exercise")")
  fi
  [[ $expect == "" || $expect == pass || $expect == fail ]] || die "test: --expect pass or fail"
  if [[ -n $log ]]; then
    quiet=1
    mkdir -p "$(dirname "$log")"
    : >"$log"
  else
    log=$(mktemp)
    # shellcheck disable=SC2064 # expand now: $log is local
    trap "rm -f '$log'" EXIT
  fi
  # Output to the log, and to the terminal unless a log was asked for.
  out() { if ((quiet)); then cat >>"$log"; else tee -a "$log"; fi; }

  local targets=() target rc=0
  kit_vendor_link
  mapfile -t targets < <(conf test "$ex" | awk '!seen[$1]++ { print $1 }')
  local build=(cargo test "${scope[@]}" --no-run)
  for target in "${targets[@]}"; do build+=(--test "$target"); done
  (cd "$ROOT" && "${build[@]}") 2>&1 | out || rc=$?
  if ((rc)); then
    echo "exercise $ex: this tree does not compile (${build[*]}):" >&2
    ((quiet)) && grep -E -A12 '^error' "$log" | head -60 >&2
    return 2
  fi
  for target in "${targets[@]}"; do
    local names=()
    mapfile -t names < <(conf test "$ex" | awk -v t="$target" '$1 == t { print $2 }')
    rc=0
    (cd "$ROOT" && timeout "$TEST_TIMEOUT" cargo test "${scope[@]}" --test "$target" -- --exact "${names[@]}") 2>&1 | out ||
      rc=${PIPESTATUS[0]}
    if ((rc == 124)); then
      echo "exercise $ex: cargo test --test $target did not finish within ${TEST_TIMEOUT} s" >&2
      return 3
    fi
  done

  # `test NAME ... ok|FAILED` lines of the log, checked test by test.
  local name status passed=0 failed=0 missing=0 unexpected=0 total=0
  while read -r target name; do
    total=$((total + 1))
    status=$(awk -v n="$name" '$1 == "test" && $2 == n && $3 == "..." { s = $4 } END { print s }' "$log")
    case $status in
      ok) passed=$((passed + 1)) ;;
      FAILED) failed=$((failed + 1)) ;;
      *) missing=$((missing + 1)); status=MISSING ;;
    esac
    local as_expected=1
    case $expect/$status in pass/FAILED | fail/ok) as_expected=0 ;; esac
    if [[ $status == MISSING ]]; then
      echo "  MISSING  $target::$name: no result (renamed? then fix exercises/$ex/exercise.conf; or the test process died)" >&2
    elif ((!as_expected)); then
      unexpected=$((unexpected + 1))
      echo "  $status  $target::$name (expected to $expect)" >&2
    elif ((!quiet)); then
      printf '  %-7s %s\n' "$status" "$target::$name"
    fi
  done < <(conf test "$ex")
  ((missing == 0)) || return 3
  if [[ -z $expect ]]; then
    if ((failed == 0)); then
      echo "exercise $ex: its tests pass ($total of $total). Well done."
    else
      echo "exercise $ex: $failed of its $total tests fail (their messages are above)."
    fi
    ((failed == 0)) || return 1
    return 0
  fi
  ((unexpected == 0)) || return 1
}

case ${1:-list} in
  list) list ;;
  names) names ;;
  resolve) resolve "${2:?resolve N}" ;;
  prepare)
    (($# >= 2)) || die "prepare N [DIR]"
    prepare "$(resolve "$2")" "${3:-}"
    ;;
  sync)
    (($# == 3)) || die "sync N DIR"
    sync_tree "$(resolve "$2")" "$3"
    ;;
  test)
    shift
    run_tests "$@"
    ;;
  *) die "unknown command $1 (list, prepare N [DIR], test [N], sync N DIR, names)" ;;
esac
