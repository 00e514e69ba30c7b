#!/usr/bin/env bash
# The compiled dependencies, kept between clean clones on a set-up machine.
#
#   scripts/dep_cache.sh restore        copies the kept builds into target/ (where absent)
#   scripts/dep_cache.sh save DIR...    keeps the dependencies' builds of target/DIR
#
# Why: `make test` compiles every crate of Cargo.lock three times from a clean clone
# (natively for the tests, for wasm32 at the wasm-test profile, for wasm32 at the
# release profile of `make pkg`), ~250 s of CPU on 2 cores of its ~1,700, the same every
# time for the same Cargo.lock, toolchain and profiles (issue 20). `make setup` on a set-up
# machine (scripts/setup.sh skips what is installed) gives them back as it gives back
# the installed tools, and the first build of a clean clone then compiles only the
# workspace's own crates (pgasync, pgasync-cli), all of them, every time.
#
# Invariants:
# - cargo decides what is fresh: a kept build is a copy of what cargo wrote, fingerprints
#   included, and cargo rebuilds whatever does not match (another flag, another feature
#   set). So a stale or foreign entry costs time, never a wrong build: nothing here
#   decides that a build is up to date;
# - the workspace's own crates are never kept (their units, found by their fingerprint
#   folders `pgasync-HASH`, `pgasync-cli-HASH`, are left out with every file named
#   after them), nor anything but cargo's three folders (.fingerprint, build, deps);
# - an entry is complete or absent: written aside and renamed into place (a concurrent
#   save of the same entry loses the race and removes its copy);
# - the key is every input that changes what cargo builds for a dependency: Cargo.lock,
#   the manifests, .cargo/config.toml, `rustc -vV`, RUSTFLAGS and DEP_CACHE_FLAGS (the
#   Makefile's flags of make pkg's builds). A new key starts empty; the two newest keys
#   are kept, older ones removed (an entry is ~0.7 GB);
# - restore copies (cp -a, never hard links: cargo rewrites some files in place) and
#   only into a folder of target/ that does not exist yet: it never mixes with a build.
#
# PGASYNC_DEP_CACHE=DIR moves the cache (default ~/.cache/pgasync/deps);
# PGASYNC_DEP_CACHE=off turns it off.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT_CACHE=${PGASYNC_DEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgasync/deps}
[ "$ROOT_CACHE" = off ] && exit 0
KEEP_KEYS=2

say() { echo "dep-cache: $*"; }

command -v rustc >/dev/null || exit 0 # a fresh machine before setup: nothing to key on yet

key() {
  {
    cat Cargo.lock Cargo.toml cli/Cargo.toml .cargo/config.toml 2>/dev/null
    rustc -vV
    echo "RUSTFLAGS=${RUSTFLAGS:-}"
    echo "DEP_CACHE_FLAGS=${DEP_CACHE_FLAGS:-}"
  } | sha256sum | cut -c1-16
}

# The hashes of the workspace's own units in target/DIR (their fingerprint folders).
own_hashes() {
  find "$1/.fingerprint" -mindepth 1 -maxdepth 1 -type d \( -name 'pgasync-*' -o -name 'pgasync-cli-*' \) \
    -printf '%f\n' 2>/dev/null | sed 's/.*-//' | sort -u
}

# Copies the dependencies' part of target/DIR ($1) into $2.
copy_deps() {
  local src=$1 dst=$2 own
  own=$(own_hashes "$src" | paste -sd'|')
  own=${own:-no-own-unit}
  mkdir -p "$dst"
  for sub in .fingerprint build deps; do
    [ -d "$src/$sub" ] || continue
    mkdir -p "$dst/$sub"
    # A unit's files and folders end in -HASH (deps/libserde-HASH.rlib, build/ring-HASH);
    # the workspace's lib without a hash (deps/libpgasync.rlib, a cdylib's) is its own.
    find "$src/$sub" -mindepth 1 -maxdepth 1 -printf '%f\n' |
      grep -Ev -- "-($own)(\\.[^/]*)?\$" | grep -Ev '^(lib)?pgasync(_cli)?(\.[a-z]+)?$' |
      while IFS= read -r name; do printf '%s\0' "$src/$sub/$name"; done |
      xargs -0 -r cp -a -t "$dst/$sub"
  done
}

restore() {
  local k entry dir
  k=$(key)
  entry=$ROOT_CACHE/$k
  [ -d "$entry" ] || { say "nothing kept for this Cargo.lock and toolchain ($k) yet: the first builds compile the dependencies"; return 0; }
  while IFS= read -r dir; do
    dir=${dir#"$entry"/}
    if [ -e "target/$dir" ]; then
      continue
    fi
    mkdir -p "target/$(dirname "$dir")"
    cp -a "$entry/$dir" "target/$dir"
    rm -f "target/$dir/.complete"
    say "target/$dir: the dependencies' build restored ($(du -sh "target/$dir" | cut -f1))"
  done < <(find "$entry" -name .complete -printf '%h\n' | sort)
}

save() {
  local k entry dir aside
  k=$(key)
  entry=$ROOT_CACHE/$k
  for dir in "$@"; do
    [ -d "target/$dir/deps" ] || { say "target/$dir: no build to keep"; continue; }
    [ -e "$entry/$dir/.complete" ] && continue
    aside=$entry/.new-$$-${dir//\//_}
    rm -rf "$aside"
    copy_deps "target/$dir" "$aside"
    touch "$aside/.complete"
    mkdir -p "$(dirname "$entry/$dir")"
    if mv -T "$aside" "$entry/$dir" 2>/dev/null; then
      say "target/$dir: the dependencies' build kept in $entry/$dir ($(du -sh "$entry/$dir" | cut -f1))"
    else
      rm -rf "$aside"
    fi
  done
  touch "$entry"
  # The newest keys stay; older ones (another Cargo.lock, another toolchain) go.
  find "$ROOT_CACHE" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -rn | tail -n +$((KEEP_KEYS + 1)) |
    cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old" && say "removed an older entry, $old"; done
}

case ${1:-} in
  restore) restore ;;
  save) shift; save "$@" ;;
  *) echo "usage: scripts/dep_cache.sh restore | save DIR..." >&2; exit 2 ;;
esac
