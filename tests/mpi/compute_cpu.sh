#!/usr/bin/env bash
# Processor-time computation (docs/replay.md "Processor-time computation"):
# the compute_cpu statistic counts what a rank computed between calls, not
# the time it slept or waited for a core, and `replay --compute-clock cpu`
# spins for that instead of the wall-clock gap.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
# late_sender: rank 0 sleeps 5 ms before each of 40 sends (1.6 s in all at
# 320 steps), and computes next to nothing.
"$TF" record --text -o ls.tf --stats compute_cpu -- "$MPIRUN" -np 2 "$APPS/app_waits_inject" 320 late_sender > out.txt 2> err.txt
slept=$(sed -n 's/^waits: late_sender injected \([0-9.]*\) s.*/\1/p' out.txt)
[[ -n $slept ]] || { cat out.txt err.txt; exit 1; }
python3 - ls.tf "$slept" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
slept = float(sys.argv[2])
def total(kind):
    return sum(int(s or 0) for s in re.findall(r"^    " + kind + r" n=\d+(?: sum=(-?\d+))?", text, re.M)) / 1e9
wall, cpu = total("compute"), total("stat compute_cpu")
samples = sum(int(n) for n in re.findall(r"^    stat compute_cpu n=(\d+)", text, re.M))
comm = sum(int(n) for n in re.findall(r"^    comm n=(\d+)", text, re.M))
# MPI_Init is timed but measured before any statistic starts: 2 ranks.
assert samples == comm - 2, f"{samples} compute_cpu samples for {comm} timed calls"
assert wall >= 0.95 * slept, f"wall-clock computation {wall:.3f} s < slept {slept:.3f} s"
assert cpu < 0.25 * slept, f"processor-time computation {cpu:.3f} s counts the {slept:.3f} s of sleep"
print(f"ok: slept {slept:.3f} s; computation wall {wall:.3f} s, processor {cpu:.3f} s")
PY
replay_wall() {  # prints the replay's wall time
  sed -n 's/^replay: .*, wall \([0-9.e+-]*\) s.*/\1/p' "$1"
}
# The wall-clock replay spins through the sleeps; the processor-time one
# has next to nothing to compute. Both keep every call (fixed point).
"$MPIRUN" -np 2 "$TF" replay ls.tf > wall.txt 2>&1
"$TF" record -o re.tf -- "$MPIRUN" -np 2 "$TF" replay --compute-clock cpu ls.tf > cpu.txt 2>&1
"$TF" diff --ignore-callsites ls.tf re.tf
w=$(replay_wall wall.txt); c=$(replay_wall cpu.txt)
awk -v w="$w" -v c="$c" -v s="$slept" 'BEGIN {
  if (w < 0.95 * s) { printf "wall-clock replay %.3f s < slept %.3f s\n", w, s; exit 1 }
  if (c > 0.5 * w) { printf "processor-time replay %.3f s, wall-clock %.3f s\n", c, w; exit 1 }
  printf "ok: replay wall clock %.3f s, processor time %.3f s\n", w, c }'
# A trace without the statistic, and --sleep with the processor clock, are refused.
"$TF" record -o plain.tf -- "$MPIRUN" -np 2 "$APPS/app_ring" 5 > /dev/null 2>&1
if "$MPIRUN" -np 2 "$TF" replay --compute-clock cpu plain.tf > e1.txt 2>&1; then exit 1; fi
grep -q "holds no compute_cpu statistic; record with --stats compute_cpu" e1.txt
if "$MPIRUN" -np 2 "$TF" replay --compute-clock cpu --sleep ls.tf > e2.txt 2>&1; then exit 1; fi
grep -q "cannot sleep" e2.txt
echo ok
