#!/usr/bin/env bash
# Lists every Rust module under crate/ and cli/src/ whose opening `//!` doc does not
# state its invariants (no "Invariant", any case), then prints
# "N of M modules state their invariants". Issue 22, item 6: every module opens with
# its invariants and where it departs from PostgreSQL; this re-measures the first half.
#
# The opening doc is the block of `//!` lines at the top of the file (blank lines and
# `#![...]` attributes before or inside it are skipped); a `//!` further down, after
# code, does not count. Run from anywhere: paths are relative to the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."

total=0
with=0
while IFS= read -r f; do
    total=$((total + 1))
    # The leading `//!` block: stop at the first line that is neither `//!`, blank,
    # nor an inner attribute.
    doc=$(awk '
        /^[[:space:]]*\/\/!/ { print; next }
        /^[[:space:]]*$/     { next }
        /^#!\[/              { next }
        { exit }
    ' "$f")
    if grep -qi 'invariant' <<<"$doc"; then
        with=$((with + 1))
    else
        echo "$f"
    fi
done < <(find crate cli/src -name '*.rs' | LC_ALL=C sort)

echo "$with of $total modules state their invariants"
