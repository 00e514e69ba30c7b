#!/usr/bin/env bash
# make workshop: the offline kit — the page, the wasm package, the lessons, the
# scenario files and the teacher's guide in one folder (and a zip of it) that any
# static file host serves with no network. Usage: scripts/workshop.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-workshop}
for f in pkg/pgasync.js pkg/pgasync_bg.wasm; do
  [ -f "$f" ] || { echo "workshop: $f is missing: run 'make pkg' first" >&2; exit 1; }
done
rm -rf "$out" "$out.zip"
mkdir -p "$out/pkg" "$out/scenarios"
# The page is plain files: copy web/ as it is; the package beside it as ./pkg/.
cp -R web/. "$out/"
cp pkg/pgasync.js pkg/pgasync_bg.wasm "$out/pkg/"
cp crate/frontend/scenarios/*.sql "$out/scenarios/"
cp docs/teacher-guide.md "$out/README.md"
(cd "$(dirname "$out")" && zip -qr "$(basename "$out").zip" "$(basename "$out")")
echo "workshop: $out/ ($(du -sh "$out" | cut -f1)) and $out.zip; serve it with any static server, e.g.:"
echo "  cd $out && python3 -m http.server 8000   # then open http://127.0.0.1:8000/"
