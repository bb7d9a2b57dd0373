#!/usr/bin/env bash
# A corrupt count line must be reported as FILE:LINE with exit 2 like any other
# format error, not surface as an allocation failure ("std::bad_alloc").
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

gen_logs "$WORK/logs" 5
run_expect 0 "$TRACEFOLD" fold --text "$WORK/logs" -o "$WORK/t.trace"
for key in sites comms nodes; do
  n=$(grep -n "^$key " "$WORK/t.trace" | cut -d: -f1)
  sed "${n}s/^$key [0-9]*\$/$key 99999999999999/" "$WORK/t.trace" >"$WORK/$key.trace"
  grep -q "^$key 99999999999999\$" "$WORK/$key.trace" || fail "test setup: $key count not changed"
  # Keep the child's address space bounded so a runaway allocation fails fast.
  rc=0
  (ulimit -v 2000000 && exec "$TRACEFOLD" print "$WORK/$key.trace") >"$WORK/out" 2>"$WORK/err" || rc=$?
  ((rc == 2)) || fail "$key: exit $rc, expected 2 ($(cat "$WORK/err"))"
  grep -q "$WORK/$key.trace:[0-9]*: " "$WORK/err" || fail "$key: error does not name FILE:LINE: $(cat "$WORK/err")"
  if grep -q "alloc" "$WORK/err"; then fail "$key: allocation failure instead of a format error: $(cat "$WORK/err")"; fi
done
echo "corrupt_counts: ok"
