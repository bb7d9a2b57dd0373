#!/usr/bin/env bash
# Clock synchronisation of timelines (docs/recording.md#clocks). One host
# has one clock, so the test hook TRACEFOLD_TEST_CLOCK_SKEW_NS makes rank 1's
# timeline clock read 5 s ahead and run 5 % fast, as another host's would.
# Checks: the skew reaches the file (rank 1's measured offsets are -5 s and
# drift by the rate), the export corrects it and says so, the corrected
# timeline is causal (no receive ends before its send began), and rank 1's
# span in the ring equals the other ranks' spans and the unskewed run's
# (uncorrected, the 5 % rate alone would make it ~5 % longer). A plain run
# on one host reports no correction and stores exact zero offsets.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
CHECK="$SRC/tests/data/export_checks.py"
NP=4
STEPS=300
UNITS=1500  # ~1.5 ms of computation per step and rank: runs of about a second

# header/trailer of a version-2 timeline file: start offset, start local
# time, start round trip; end offset, end local time, end round trip
clock_samples() {
  python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:4] == b"TFTL" and d[4] == 2, "not a version 2 timeline"
so, sl, sr = struct.unpack_from("<qqq", d, 21)
mark, eo, el, er = struct.unpack_from("<Iqqq", d, len(d) - 44)
assert mark == 0xFFFFFFFF, "no trailer"
print(so, sl, sr, eo, el, er)
EOF
}

# spans SKIP JSON: per rank, time from the end of its SKIP-th MPI_Waitall
# (the ring is in lockstep by then) to the end of its MPI_Allreduce, in ms
spans() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
skip, path = int(sys.argv[1]), sys.argv[2]
ev = json.load(open(path))["traceEvents"]
waits, ends = {}, {}
for e in ev:
    if e.get("ph") != "X":
        continue
    op = e["name"].split()[0]
    if op == "MPI_Waitall":
        waits.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
    elif op == "MPI_Allreduce":
        ends[e["pid"]] = e["ts"] + e["dur"]
print(" ".join("%.3f" % ((ends[r] - sorted(waits[r])[skip - 1]) / 1000) for r in sorted(ends)))
EOF
}

run() {  # run NAME [ENV...]: record the ring with --timeline into NAME.tf
  local name=$1
  shift
  limited "$name-out.txt" "$name-err.txt" env "$@" "$TF" record --timeline -o "$name.tf" -- \
    "$MPIRUN" -np $NP "$APPS/app_ring" $STEPS $UNITS
}

exports() {  # exports NAME: perfetto export, causality check against the expansion
  local name=$1 r
  mkdir -p "$name-expand"
  for ((r = 0; r < NP; r++)); do "$TF" expand "$name.tf" -r $r >"$name-expand/rank-$r.txt"; done
  "$TF" export "$name.tf" --perfetto "$name.json" 2>"$name-export.txt" &&
    python3 "$CHECK" perfetto "$name.json" "$name-expand" \
      "$(grep -Eo '[0-9]+ matched messages' "$name-export.txt" | head -n 1 | awk '{print $1}')" \
      recorded >"$name-check.txt" 2>&1
}

# ------------------------------------------------------------ unskewed run
CHECKS=$((CHECKS + 1))
run plain
if [[ $LRC -ne 0 ]]; then
  bad "recording the ring with --timeline failed ($LRC)"; show_run plain-out.txt plain-err.txt
elif ! exports plain; then
  bad "export of the unskewed timeline"; cat plain-export.txt plain-check.txt >&2
elif grep -q "clocks:" plain-export.txt; then
  bad "one host, one clock, yet a correction was reported"; cat plain-export.txt >&2
else
  read -r so sl sr eo el er <<<"$(clock_samples plain.tf.timeline/rank-1.tft)"
  if [[ $so != 0 || $sr != 0 || $eo != 0 || $er != 0 ]]; then
    bad "rank 1 on rank 0's host: offsets $so/$eo and round trips $sr/$er, want exact zeros"
  else
    ok "unskewed: zero offsets on one host, no correction reported, timeline causal"
  fi
fi

# ------------------------------------------------------------ skewed run
SKEW_NS=5000000000
SKEW_PPM=50000
CHECKS=$((CHECKS + 1))
run skew TRACEFOLD_TEST_CLOCK_SKEW_NS=1:$SKEW_NS:$SKEW_PPM
if [[ $LRC -ne 0 ]]; then
  bad "recording with the clock skew hook failed ($LRC)"; show_run skew-out.txt skew-err.txt
elif ! cmp -s <(head -n 1 plain-out.txt) <(head -n 1 skew-out.txt); then
  bad "the skew hook changed the program's output"; show_run plain-out.txt skew-out.txt
else
  read -r so sl sr eo el er <<<"$(clock_samples skew.tf.timeline/rank-1.tft)"
  # rank 0's clock = local - 5 s - 5 % of the time since MPI_Init, within
  # half a round trip; the rate comes out as -ppm / (1 + ppm).
  if ! python3 - "$so" "$sl" "$sr" "$eo" "$el" "$er" "$SKEW_NS" "$SKEW_PPM" <<'EOF'; then
import sys
so, sl, sr, eo, el, er, skew, ppm = (float(x) for x in sys.argv[1:])
assert sr > 0 and er > 0, "round trips %d/%d: rank 1 did not measure" % (sr, er)
assert abs(so + skew) < 50e6, "start offset %d, want about %d" % (so, -skew)
rate = (eo - so) / (el - sl) * 1e6
want = -ppm / (1 + ppm * 1e-6)
assert abs(rate - want) < 0.02 * ppm, "measured drift %.0f ppm, want about %.0f" % (rate, want)
print("rank 1: offset %.6f s at start, drift %.0f ppm" % (so / 1e9, rate))
EOF
    bad "rank 1's clock samples do not show the skew"
  elif ! exports skew; then
    bad "the corrected timeline is not causal or does not export"; cat skew-export.txt skew-check.txt >&2
  elif ! grep -Eq "clocks: [0-9]+ ranks? corrected by up to 5(\.0+)? s" skew-export.txt; then
    bad "the export does not report the 5 s correction"; cat skew-export.txt >&2
  else
    ok "skewed: rank 1's 5 s offset and 5 % drift measured and corrected; timeline causal ($(grep -o 'clocks:.*' skew-export.txt))"
  fi
fi

# ------------------------------------------------------------ durations
# After 2 x NP steps the ring runs in lockstep: every rank's span to the
# final Allreduce is the same within scheduling noise. A rate left
# uncorrected adds 5 % to rank 1's.
CHECKS=$((CHECKS + 1))
if [[ -s skew.json && -s plain.json ]]; then
  read -r -a S <<<"$(spans $((2 * NP)) skew.json)"
  read -r -a P <<<"$(spans $((2 * NP)) plain.json)"
  if python3 - "${S[*]}" "${P[*]}" <<'EOF'; then
import sys
s = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
others = [v for r, v in enumerate(s) if r != 1]
ref = sum(others) / len(others)
# 1 % of the span plus 10 ms of scheduling noise; the uncorrected rate would be 5 %.
assert abs(s[1] - ref) <= 0.01 * ref + 10, "rank 1 spans %.1f ms, the others %.1f ms" % (s[1], ref)
# Another run of the same program: its own noise, so only within 20 %.
pref = sum(p) / len(p)
assert abs(s[1] - pref) <= 0.2 * pref, "rank 1 spans %.1f ms, the unskewed run %.1f ms" % (s[1], pref)
EOF
    ok "durations: rank 1 ${S[1]} ms, other ranks ${S[0]} ${S[2]} ${S[3]} ms, unskewed run ${P[*]} ms"
  else
    bad "durations differ after correction: skewed run ${S[*]} ms, unskewed ${P[*]} ms"
  fi
else
  bad "no exports to compare durations"
fi

finish
