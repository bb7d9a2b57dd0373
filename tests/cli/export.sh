#!/usr/bin/env bash
# `tracefold export` (Perfetto JSON, OTF2) and `stats --matrix*` on the
# bundled examples: the JSON parses, slices follow each rank's events and
# nest, every flow joins a send to a receive; otf2-print reads the archive
# and its send/receive/collective records match the trace; the 16-rank 2-D
# stencil's matrix has exactly the neighbour pattern (CSV, SVG, PNG).
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
CHECK="$SRC/tests/data/export_checks.py"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
command -v otf2-print >/dev/null || fail "otf2-print not found (scripts/install-deps.sh installs otf2-tools)"

# expand_all TRACE DIR: every rank's events, one file per rank.
expand_all() {
  local trace=$1 dir=$2 n r
  mkdir -p "$dir"
  n=$("$TRACEFOLD" convert "$trace" --text -o - | sed -n 's/^world //p')
  for ((r = 0; r < n; r++)); do "$TRACEFOLD" expand "$trace" -r "$r" >"$dir/rank-$r.txt"; done
}

# name, raw-log directory, expected matched messages (non-null sends).
for spec in "ring ring-rawlog 200" "halo halo-rawlog 14" "stencil stencil2d-rawlog 960"; do
  read -r name dir msgs <<<"$spec"
  run_expect 0 "$TRACEFOLD" fold "$SRC/examples/$dir" -o "$WORK/$name.tf"
  expand_all "$WORK/$name.tf" "$WORK/$name-expand"

  run_expect 0 "$TRACEFOLD" export "$WORK/$name.tf" --perfetto "$WORK/$name.json" --otf2 "$WORK/$name-otf2"
  expect_in "$ERR" "$msgs matched messages" "$name: export summary"
  expect_in "$ERR" "synthesized" "$name: export summary"
  python3 "$CHECK" perfetto "$WORK/$name.json" "$WORK/$name-expand" "$msgs" || fail "$name: perfetto checks"

  [[ -f $WORK/$name-otf2/traces.otf2 ]] || fail "$name: no traces.otf2"
  run_expect 0 otf2-print "$WORK/$name-otf2/traces.otf2"
  [[ -z $ERR ]] || fail "$name: otf2-print complained: $ERR"
  printf '%s\n' "$OUT" >"$WORK/$name-otf2.txt"
  python3 "$CHECK" otf2 "$WORK/$name-otf2.txt" "$WORK/$name-expand" || fail "$name: otf2 record counts"
  run_expect 0 otf2-print -A "$WORK/$name-otf2/traces.otf2"
  expect_in "$OUT" "synthesized from folded trace means" "$name: OTF2 timeline property"
  expect_in "$OUT" "MPI_COMM_WORLD" "$name: OTF2 communicator"
done

# Exporting twice into the same directory replaces the archive.
run_expect 0 "$TRACEFOLD" export "$WORK/ring.tf" --otf2 "$WORK/ring-otf2"
run_expect 0 otf2-print "$WORK/ring-otf2/traces.otf2"

# ------------------------------------------------------------- matrix
# 4x4 non-periodic stencil, 20 steps, 24 doubles per message.
run_expect 0 "$TRACEFOLD" stats "$WORK/stencil.tf" --matrix "$WORK/m.csv" --matrix-svg "$WORK/m.svg" \
  --matrix-png "$WORK/m.png" --ranks-svg "$WORK/ranks.svg"
expect_in "$OUT" "MPI_Waitall" "stats still prints its table"
python3 "$CHECK" grid 4 4 20 3840 "$WORK/m.csv" "$WORK/m.svg" "$WORK/m.png" || fail "stencil matrix pattern"
# The ring: each rank sends to its right neighbour only, 50 messages.
run_expect 0 "$TRACEFOLD" stats "$WORK/ring.tf" --matrix "$WORK/ring.csv"
[[ "$(cat "$WORK/ring.csv")" == "sender,receiver,messages,bytes
0,1,50,409600
1,2,50,409600
2,3,50,409600
3,0,50,409600" ]] || fail "ring matrix: $(cat "$WORK/ring.csv")"
# The halo: PROC_NULL sends are no messages; rank 0's setup sends are.
run_expect 0 "$TRACEFOLD" stats "$WORK/halo.tf" --matrix "$WORK/halo.csv"
[[ "$(cat "$WORK/halo.csv")" == "sender,receiver,messages,bytes
0,1,7,12304
0,2,1,16
1,2,6,12288" ]] || fail "halo matrix: $(cat "$WORK/halo.csv")"

# Per-rank chart: one computation and one MPI bar per rank, with the sums
# of the expanded mean times.
python3 - "$WORK/ranks.svg" "$WORK/stencil.tf" "$TRACEFOLD" <<'PY'
import re, subprocess, sys
svg = open(sys.argv[1]).read()
comp = {int(r): int(v) for r, v in re.findall(r'class="bar-compute" data-rank="(\d+)" data-ns="(\d+)"', svg)}
comm = {int(r): int(v) for r, v in re.findall(r'class="bar-comm" data-rank="(\d+)" data-ns="(\d+)"', svg)}
assert sorted(comp) == list(range(16)) and sorted(comm) == list(range(16)), (comp, comm)
for r in range(16):
    out = subprocess.run([sys.argv[3], "expand", sys.argv[2], "-r", str(r), "--timing"], check=True,
                         capture_output=True, text=True).stdout
    c = sum(int(v) for v in re.findall(r"compute_ns=(\d+)", out))
    m = sum(int(v) for v in re.findall(r"comm_ns=(\d+)", out))
    assert comp[r] == c and comm[r] == m, (r, comp[r], c, comm[r], m)
# Interior ranks (4 neighbours) wait longer than corner ranks (2).
assert comm[5] > comm[0], (comm[5], comm[0])
for needle in ("computation", "in MPI calls", "rank"):
    assert needle in svg, needle
PY

# ------------------------------------------------------------- errors
run_expect 2 "$TRACEFOLD" export "$WORK/ring.tf"
expect_in "$ERR" "--perfetto" "export without an output"
run_expect 2 "$TRACEFOLD" export "$WORK/ring.tf" --perfetto "$WORK/no/such/dir/x.json"
expect_in "$ERR" "cannot write" "export to a missing directory"
run_expect 2 "$TRACEFOLD" stats "$WORK/ring.tf" --matrix "$WORK/no/such/dir/x.csv"
expect_in "$ERR" "cannot write" "stats --matrix to a missing directory"
run_expect 2 "$TRACEFOLD" export "$WORK/missing.tf" --perfetto "$WORK/x.json"
run_expect 0 "$TRACEFOLD" export --help
expect_in "$OUT" "--otf2" "export --help"
run_expect 0 "$TRACEFOLD" stats --help
expect_in "$OUT" "--matrix-svg" "stats --help"
echo "export: ok"
