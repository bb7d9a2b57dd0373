#!/usr/bin/env bash
# `tracefold bench --compute-clock cpu` (docs/bench.md "Processor-time
# computation"): the benchmark spins for the processor time the program
# computed between calls (the compute_cpu statistic), not for the
# wall-clock gap. waits_inject's late_sender sleeps 5 ms before each of 40
# sends (1.6 s at 320 steps) and computes next to nothing: the wall-clock
# benchmark spins through the sleeps, the processor-time one does not, and
# both make the program's calls. A trace without the statistic, and the
# option with an output that cannot honour it, are refused.
# scripts/bench-cpu-clock.sh compares both clocks with the program on an
# oversubscribed run (too noisy on a shared machine for a test).
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$TF" record --text -o ls.tf --stats compute_cpu -- "$MPIRUN" -np 2 "$APPS/app_waits_inject" 320 late_sender > out.txt 2> err.txt
slept=$(sed -n 's/^waits: late_sender injected \([0-9.]*\) s.*/\1/p' out.txt)
[[ -n $slept ]] || { cat out.txt err.txt; exit 1; }
for c in wall cpu; do
  "$TF" bench --compute-clock "$c" ls.tf -o "$c.c"
  "${TRACEFOLD_MPICC:-mpicc}" -std=c11 -Wall -Wextra -Werror -O1 "$c.c" -o "$c"
done
# Waits before calls (a time or a choice by the call before), not the
# helpers every program carries.
wait_of() { echo "^ +$1\\(([0-9]+\\)|after|\\()"; }
grep -Eq "$(wait_of spin_cpu_ns)" cpu.c
if grep -Eq "$(wait_of spin_cpu_ns)" wall.c; then echo "the wall-clock benchmark spins on the processor clock"; exit 1; fi
if grep -Eq "$(wait_of spin_ns)" cpu.c; then echo "the processor-time benchmark spins on the wall clock"; exit 1; fi
grep -Eq "$(wait_of spin_ns)" wall.c
bench_wall() { sed -n 's/^bench: .* wall time \([0-9.]*\) s$/\1/p' "$1"; }
"$MPIRUN" -np 2 ./wall > wall.txt 2>&1
"$TF" record -o re.tf -- "$MPIRUN" -np 2 ./cpu > cpu.txt 2>&1
"$TF" diff --ignore-callsites ls.tf re.tf
w=$(bench_wall wall.txt); c=$(bench_wall cpu.txt)
[[ -n $w && -n $c ]] || { cat wall.txt cpu.txt; exit 1; }
awk -v w="$w" -v c="$c" -v s="$slept" 'BEGIN {
  if (w < 0.95 * s) { printf "wall-clock benchmark %.3f s < slept %.3f s\n", w, s; exit 1 }
  if (c > 0.5 * w) { printf "processor-time benchmark %.3f s, wall-clock %.3f s\n", c, w; exit 1 }
  printf "ok: slept %.3f s; benchmark wall clock %.3f s, processor time %.3f s\n", s, w, c }'
# Refusals: exit 2, a message, no file.
"$TF" record -o plain.tf -- "$MPIRUN" -np 2 "$APPS/app_ring" 5 > /dev/null 2>&1
rc=0; "$TF" bench --compute-clock cpu plain.tf -o e1.c 2> e1.txt || rc=$?
[[ $rc -eq 2 && ! -e e1.c ]] || { echo "no compute_cpu: exit $rc"; cat e1.txt; exit 1; }
grep -q "holds no compute_cpu statistic; record with --stats compute_cpu" e1.txt
rc=0; "$TF" bench --compute-clock cpu --lang conceptual ls.tf -o e2.ncptl 2> e2.txt || rc=$?
[[ $rc -eq 2 && ! -e e2.ncptl ]] || { echo "conceptual: exit $rc"; cat e2.txt; exit 1; }
grep -q "compute-clock cpu writes C from one trace only" e2.txt
echo ok
