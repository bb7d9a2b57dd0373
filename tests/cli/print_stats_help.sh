#!/usr/bin/env bash
# `print` shows loops, ranklists and parameters; `stats` (text and --json)
# profiles per call site; every subcommand has --help.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

gen_logs "$WORK/logs" 20
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace"

# ------------------------------------------------------------------ print
run_expect 0 "$TRACEFOLD" print "$WORK/t.trace"
PRINT=$OUT
expect_in "$PRINT" "4 ranks" "print header"
expect_in "$PRINT" "lossless" "print header"
for op in MPI_Irecv MPI_Isend MPI_Waitall MPI_Allreduce MPI_Bcast; do expect_in "$PRINT" "$op" "print ops"; done
expect_in "$PRINT" "ring+0x1a0 main+0x40" "print call sites"
expect_in "$PRINT" "loop" "print loops"
expect_in "$PRINT" "<1 0 4 1>" "print ranklist of all ranks"
expect_in "$PRINT" "<0 0>" "print ranklist of rank 0 (Bcast)"
expect_in "$PRINT" "(16 32)*10" "print folded count values"
# The 20 steps: 4 outer iterations of 5 (every 5th step ends with an Allreduce).
expect_in "$PRINT" "iters 4 @" "print outer loop"
expect_in "$PRINT" "iters 5*4 @" "print inner loop"
# Loops nest by indentation: the Irecv is deeper than the Allreduce, which is
# deeper than the Bcast.
ind() { printf '%s\n' "$PRINT" | grep -m1 "$1" | sed -E 's/^( *).*/\1/' | wc -c; }
(($(ind 'MPI_Irecv') > $(ind 'MPI_Allreduce'))) || fail "print: Irecv not nested deeper than Allreduce"
(($(ind 'MPI_Allreduce') > $(ind 'MPI_Bcast'))) || fail "print: Allreduce not nested deeper than Bcast"

# ------------------------------------------------------------------ stats
run_expect 0 "$TRACEFOLD" stats "$WORK/t.trace"
STATS=$OUT
expect_in "$STATS" "4 ranks" "stats header"
# Irecv: 4 ranks x 20 calls, 16 or 32 doubles each: 4 * 10 * (128 + 256) bytes.
row=$(printf '%s\n' "$STATS" | grep '^MPI_Irecv ')
read -r _op _site _main calls bytes _rest <<<"$row"
[[ "$calls" == 80 ]] || fail "stats: Irecv calls $calls, expected 80 ($row)"
[[ "$bytes" == 15360 ]] || fail "stats: Irecv bytes $bytes, expected 15360 ($row)"
row=$(printf '%s\n' "$STATS" | grep '^MPI_Bcast ')
read -r _op _site _main calls bytes _rest <<<"$row"
[[ "$calls" == 1 && "$bytes" == 16 ]] || fail "stats: Bcast row '$row'"
# Sorted by time in the call: Waitall (40..59 ns each) first.
first=$(printf '%s\n' "$STATS" | grep -m1 '^MPI_' | cut -d' ' -f1)
[[ "$first" == MPI_Waitall ]] || fail "stats: first row is $first, expected MPI_Waitall"

run_expect 0 "$TRACEFOLD" stats --json "$WORK/t.trace"
printf '%s\n' "$OUT" >"$WORK/stats.json"
python3 - "$WORK/stats.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
assert j["ranks"] == 4, j["ranks"]
assert j["lossy"] is False
rows = {r["op"]: r for r in j["rows"]}
assert set(rows) == {"MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast"}, rows.keys()
assert rows["MPI_Isend"]["calls"] == 80 and rows["MPI_Isend"]["bytes"] == 15360, rows["MPI_Isend"]
assert rows["MPI_Allreduce"]["calls"] == 16, rows["MPI_Allreduce"]
assert rows["MPI_Bcast"]["ranks"] == "<0 0>", rows["MPI_Bcast"]
assert rows["MPI_Irecv"]["ranks"] == "<1 0 4 1>", rows["MPI_Irecv"]
assert rows["MPI_Irecv"]["site"] == "ring+0x1a0 main+0x40", rows["MPI_Irecv"]
assert rows["MPI_Irecv"]["time_total_ns"] == 80 * 20, rows["MPI_Irecv"]
assert rows["MPI_Waitall"]["time_min_ns"] == 40 and rows["MPI_Waitall"]["time_max_ns"] == 59, rows["MPI_Waitall"]
share = sum(r["time_share"] for r in j["rows"])
assert abs(share - 1.0) < 1e-9, share
PY

# Stats of the .zst form are the same.
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace.zst"
run_expect 0 "$TRACEFOLD" stats --json "$WORK/t.trace.zst"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.loads(sys.stdin.read()); assert a["rows"]==b["rows"]' \
  "$WORK/stats.json" <<<"$OUT" || fail "stats of .zst differ"

# ------------------------------------------------------------------ --help
run_expect 0 "$TRACEFOLD" --help
for sub in fold merge expand diff print stats; do
  expect_in "$OUT" "$sub" "top-level --help lists $sub"
done
for sub in fold merge expand diff print stats; do
  run_expect 0 "$TRACEFOLD" "$sub" --help
  expect_in "$OUT" "Usage" "$sub --help"
  expect_in "$OUT" "$sub" "$sub --help"
done
run_expect 0 "$TRACEFOLD" diff --help
expect_in "$OUT" "--ignore-callsites" "diff --help"
run_expect 0 "$TRACEFOLD" stats --help
expect_in "$OUT" "--json" "stats --help"
run_expect 0 "$TRACEFOLD" expand --help
expect_in "$OUT" "--rank" "expand --help"
run_expect 0 "$TRACEFOLD" fold --help
expect_in "$OUT" "--output" "fold --help"
# No subcommand, or an unknown one, is a usage error.
rc=0
"$TRACEFOLD" >/dev/null 2>&1 || rc=$?
((rc != 0)) || fail "no subcommand should fail"
rc=0
"$TRACEFOLD" frobnicate >/dev/null 2>&1 || rc=$?
((rc != 0)) || fail "unknown subcommand should fail"
echo "print_stats_help: ok"
