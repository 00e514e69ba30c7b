#!/usr/bin/env bash
# make workshop: the offline kit — the page, the wasm package, the lessons, the
# scenario files and the teacher's guide in one folder (and a zip of it) that any
# static file host serves with no network. Usage: scripts/workshop.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-workshop}
for f in pkg/pgasync.js pkg/pgasync_bg.wasm pkg/pgasync_sql.js pkg/pgasync_sql_bg.wasm; do
  [ -f "$f" ] || { echo "workshop: $f is missing: run 'make pkg' first" >&2; exit 1; }
done
rm -rf "$out" "$out.zip"
mkdir -p "$out/pkg" "$out/scenarios"
# The page is plain files: copy web/ as it is; the package beside it as ./pkg/ (its two
# modules: the page's, and the SQL front end's that the editor loads).
cp -R web/. "$out/"
cp pkg/pgasync.js pkg/pgasync_bg.wasm pkg/pgasync_sql.js pkg/pgasync_sql_bg.wasm "$out/pkg/"
cp crate/coordinator_sql/scenarios/*.sql "$out/scenarios/"
cp docs/teacher-guide.md "$out/README.md"

# The handout, as a page and as a PDF (headless Chromium prints it; without one the kit
# has the page only, and says so).
if [[ -n ${CHROMIUM:-} || -x /usr/bin/chromium ]]; then
  # Headless Chromium's --print-to-pdf now and then crashes on a loaded machine (a CI run
  # saw a segmentation fault and no file): a fresh profile each try, and three tries.
  printed=0
  for try in 1 2 3; do
    profile=$(mktemp -d)
    rm -f "$out/handout.pdf"
    "${CHROMIUM:-/usr/bin/chromium}" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
      --user-data-dir="$profile" --no-pdf-header-footer \
      --print-to-pdf="$PWD/$out/handout.pdf" "file://$PWD/$out/handout.html" >/dev/null 2>&1 || true
    rm -rf "$profile"
    if [[ -s $out/handout.pdf ]]; then printed=1; break; fi
    echo "workshop: printing the handout PDF failed (try $try of 3)" >&2
  done
  [[ $printed == 1 ]] ||
    echo "workshop: warning: the handout PDF could not be printed (handout.html is there)" >&2
else
  echo "workshop: note: no Chromium (CHROMIUM=...): handout.pdf not made, handout.html is there" >&2
fi

# The code exercises, offline (WORKSHOP_CODE=0 leaves them out): the project's source
# in code/ (the library and its tests; not the CLI), every crate it needs vendored
# (cargo vendor) and a Cargo config that uses only those (no registry, no network), and
# a target directory with the dependencies already compiled, which every exercise copy
# (code/exercise-N/) shares: after an edit only the crate is compiled again.
if [[ ${WORKSHOP_CODE:-1} != 0 ]]; then
  code=$out/code
  mkdir -p "$code"
  # web/lessons/ stays: the core's test suite embeds the lessons (include_str!).
  git ls-files -z --cached --others --exclude-standard |
    grep -zv -e '^cli/' -e '^tests/e2e/' -e '^web/[^l]' -e '^web/l[^e]' -e '^web/[^/]*$' -e '^docs/' |
    while IFS= read -r -d '' f; do
      [[ -f $f ]] || continue
      mkdir -p "$code/$(dirname "$f")"
      cp "$f" "$code/$f"
    done
  # The library alone: no CLI member; an rlib only, so that the copies' libraries
  # (code/ and code/exercise-N/ build in one target directory) get names of their own.
  sed -i -e 's/^members = \["cli"\]$/members = []/' \
    -e 's/^crate-type = \["cdylib", "rlib"\]$/crate-type = ["rlib"]/' "$code/Cargo.toml"
  grep -q '^members = \[\]$' "$code/Cargo.toml" && grep -q '^crate-type = \["rlib"\]$' "$code/Cargo.toml" ||
    { echo "workshop: Cargo.toml's members or crate-type line is not the expected one" >&2; exit 1; }
  (cd "$code" && cargo vendor --quiet --versioned-dirs vendor >/dev/null)
  mkdir -p "$code/.cargo"
  cat >"$code/.cargo/config.toml" <<'TOML'
# The workshop kit: every crate from vendor/ (cargo vendor), never the network; one
# target directory for code/ and every exercise copy in it (code/exercise-N/).
[source.crates-io]
replace-with = "vendored-sources"

# A fixed path (a link to this folder's vendor/, which scripts/exercise.sh makes): cargo
# keys a compiled crate on the path of its source, so with a path that is the same on
# every laptop the compiled dependencies in target/ stay good wherever the kit is
# unpacked.
[source.vendored-sources]
directory = "/tmp/pgasync-workshop-vendor"

[net]
offline = true

[build]
target-dir = "target"

# No debug information: a smaller kit and quicker links (a test's panic still says where).
[profile.dev]
debug = 0
TOML
  ln -sfn "$(cd "$code/vendor" && pwd -P)" /tmp/pgasync-workshop-vendor
  # The dependencies of the exercises' tests, compiled once here.
  tests=$(cat exercises/*/exercise.conf | awk '$1 == "test" { print "--test " $2 }' | sort -u | tr '\n' ' ')
  # shellcheck disable=SC2086 # one word per option
  (cd "$code" && env -u CARGO_TARGET_DIR cargo test --offline --no-run $tests >/dev/null 2>&1) ||
    { echo "workshop: the exercises' tests do not build in $code (cargo test --no-run $tests)" >&2; exit 1; }
  # What only code/ itself would use: its own library, test binary and incremental
  # state (an exercise copy compiles the crate from its own path).
  rm -rf "$code/target/debug/incremental" "$code"/target/debug/.fingerprint/pgasync-*
  rm -f "$code"/target/debug/deps/libpgasync-* "$code"/target/debug/deps/pgasync-*
  for t in $tests; do [[ $t == --test ]] || rm -f "$code"/target/debug/deps/"$t"-*; done
  echo "workshop: $code/ ($(du -sh "$code" | cut -f1): vendor/ $(du -sh "$code/vendor" | cut -f1), target/ $(du -sh "$code/target" | cut -f1))"
fi

(cd "$(dirname "$out")" && zip -qr "$(basename "$out").zip" "$(basename "$out")")
echo "workshop: $out/ ($(du -sh "$out" | cut -f1)) and $out.zip; serve it with any static server, e.g.:"
echo "  cd $out && python3 -m http.server 8000   # then open http://127.0.0.1:8000/"
if [[ -d $out/code ]]; then
  echo "  the code exercises, offline: cd $out/code && make exercise 1"
fi
