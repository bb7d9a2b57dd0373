#!/usr/bin/env bash
# Sizes a trace only claims must not cost memory (issue 18, items 1 and 4):
#  - a zstd body that expands far beyond its size (a decompression bomb), in
#    the compact form and in a `.zst` text trace, is refused with the file
#    named, within a bounded address space;
#  - `print` of a trace that declares 10,000,000 ranks fails with FILE:LINE
#    and exit 2 within the same bound, instead of building per-rank tables.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
command -v zstd >/dev/null || fail "zstd (the command) is missing: scripts/install-deps.sh"

# bounded CMD... : runs CMD with at most 1 GB of address space; $RC, $ERR.
bounded() {
  RC=0
  (ulimit -v 1000000 && exec "$@") >"$WORK/out" 2>"$WORK/err" || RC=$?
  ERR=$(cat "$WORK/err")
}

gen_logs "$WORK/logs" 5
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.tf"
run_expect 0 "$TRACEFOLD" fold --text "$WORK/logs" -o "$WORK/t.txt"

# 200 MB of zeros compress to a few kilobytes.
head -c 200000000 /dev/zero | zstd -q -c >"$WORK/zeros.zst"
# The compact form: its 5-byte header, then one zstd frame (docs/format.md).
{ head -c 5 "$WORK/t.tf"; cat "$WORK/zeros.zst"; } >"$WORK/bomb.tf"
cp "$WORK/zeros.zst" "$WORK/bomb.txt.zst"
for f in bomb.tf bomb.txt.zst; do
  bounded "$TRACEFOLD" print "$WORK/$f"
  ((RC == 2)) || fail "$f: exit $RC, expected 2 ($ERR)"
  expect_in "$ERR" "$WORK/$f" "$f: the error names the file"
  expect_in "$ERR" "expands to more than" "$f: the error says why"
  if grep -q alloc <<<"$ERR"; then fail "$f: allocation failure: $ERR"; fi
done

# world 10,000,000 in a small text trace.
n=$(grep -n '^world ' "$WORK/t.txt" | cut -d: -f1)
[[ -n $n ]] || fail "test setup: no world line in the text trace"
sed "${n}s/^world .*/world 10000000/" "$WORK/t.txt" >"$WORK/world.txt"
bounded "$TRACEFOLD" print "$WORK/world.txt"
((RC == 2)) || fail "world 1e7: exit $RC, expected 2 ($ERR)"
expect_in "$ERR" "$WORK/world.txt:$n: " "world 1e7: the error names FILE:LINE"
expect_in "$ERR" "4194304" "world 1e7: the error names the limit"
echo "reader_limits: ok"
