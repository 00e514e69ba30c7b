#!/bin/bash
# pkg_size.sh FILE BUDGET WHAT: prints FILE's size, raw and gzipped (gzip's default
# level, as a web server sends it), and fails when the gzipped size passes BUDGET bytes.
set -euo pipefail
file=$1 budget=$2 what=$3
raw=$(stat -c %s "$file")
gz=$(gzip -c "$file" | wc -c)
echo "$file: $raw bytes, $gz gzipped (budget $budget gzipped): $what"
if [ "$gz" -gt "$budget" ]; then
  echo "$file: $gz bytes gzipped is over its budget of $budget (Makefile: PKG_BUDGET_GZ, PKG_SQL_BUDGET_GZ)" >&2
  exit 1
fi
