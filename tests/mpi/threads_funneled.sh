#!/usr/bin/env bash
# A hybrid stencil under MPI_THREAD_FUNNELED (tests/apps/omp_stencil.c):
# OpenMP threads compute, the master thread alone calls MPI, on a periodic
# ring. Only one thread per rank talks, so the trace is that of a
# one-thread rank whatever the OpenMP thread count: 1, 2 and 4 threads give
# the same trace without its times, byte for byte. It is SPMD in ranks too:
# at 2 and 4 ranks x 1, 2 and 4 threads the trace's size without times
# stays within 5 % of the smallest.
# With times, every run has the same time blocks (predecessors) and
# histograms; only the measured numbers differ, and the bytes they take:
# on a loaded 2-core machine 4 ranks of up to 4 threads wait for the
# processor, and their histograms hold milliseconds where 2 ranks measure
# microseconds. So the 5 % bound with times is checked on the traces with
# one run's numbers put into every run's histograms, which holds the rest
# of the timing part to the bound; the sizes as recorded are printed.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -x $APPS/app_omp_stencil ]] || { echo "no OpenMP: app_omp_stencil was not built"; exit 77; }
export OMP_WAIT_POLICY=passive
# The timing part of a trace in text form: its histogram lines (compute,
# comm, stat) and, for the structure, everything else of its time blocks.
histograms() { grep -E '^    (compute|comm|stat) ' "$1"; }
time_blocks() { grep -E '^(node |  time )' "$1"; }
# with_times TEXT HISTOGRAMS: TEXT with its histogram lines, in order,
# replaced by those of HISTOGRAMS.
with_times() {
  awk 'NR == FNR { h[++n] = $0; next }
       /^    (compute|comm|stat) / { print h[++k]; next } { print }' "$2" "$1"
}
min=0 max=0
for np in 2 4; do
  for nt in 1 2 4; do
    d=np$np-nt$nt
    "$TF" record -o $d.tf -- "$MPIRUN" -np $np "$APPS/app_omp_stencil" 8 $nt > $d.out 2> $d.err ||
      { cat $d.err >&2; fail "$d: record failed"; }
    grep -q "tracing is off" $d.err && { cat $d.err >&2; fail "$d: tracing went off"; }
    "$TF" convert $d.tf --text -o - > $d.txt
    grep -q "^threads " $d.txt && fail "$d: a FUNNELED rank has one MPI thread, the trace says $(grep '^threads ' $d.txt)"
    "$TF" convert --no-timing $d.tf -o $d.nt.tf > /dev/null 2>&1
    size=$(stat -c %s $d.nt.tf)
    echo "$d: $size bytes without times, $(stat -c %s $d.tf) with"
    if ((min == 0 || size < min)); then min=$size; fi
    if ((size > max)); then max=$size; fi
  done
  for nt in 2 4; do
    cmp -s np$np-nt1.nt.tf np$np-nt$nt.nt.tf ||
      fail "$np ranks: 1 and $nt OpenMP threads give different traces"
  done
done
((max * 100 <= min * 105)) || fail "trace size varies over ranks and threads: $min to $max bytes"
ref=np2-nt1
histograms $ref.txt > ref.hist
min=0 max=0
for d in np2-nt1 np2-nt2 np2-nt4 np4-nt1 np4-nt2 np4-nt4; do
  diff <(time_blocks $ref.txt) <(time_blocks $d.txt) > $d.blocks ||
    { cat $d.blocks >&2; fail "$d: the time blocks differ from $ref's"; }
  [[ $(histograms $d.txt | wc -l) -eq $(wc -l < ref.hist) ]] || fail "$d: another number of histograms"
  with_times $d.txt ref.hist > $d.ref.txt
  "$TF" convert $d.ref.txt -o $d.ref.tf > /dev/null 2>&1 || fail "$d: $ref's times do not read back"
  size=$(stat -c %s $d.ref.tf)
  echo "$d: $size bytes with $ref's times"
  if ((min == 0 || size < min)); then min=$size; fi
  if ((size > max)); then max=$size; fi
done
((max * 100 <= min * 105)) || fail "with the same times, trace size varies: $min to $max bytes"
# The level is recorded, and replay asks for it again: no --single-thread,
# and the replay's own trace records FUNNELED too (the diff compares it).
level="thread level: required MPI_THREAD_FUNNELED, provided MPI_THREAD_FUNNELED"
"$TF" print np2-nt2.tf | grep -qx "$level" || fail "print does not show '$level'"
"$TF" record -o replay.tf -- "$MPIRUN" -np 2 "$TF" replay np2-nt2.tf > replay.out 2> replay.err ||
  { cat replay.out replay.err >&2; fail "replaying the FUNNELED trace"; }
"$TF" diff --ignore-callsites np2-nt2.tf replay.tf | tee replay.diff
grep -qx "same: 2 ranks" replay.diff || fail "the replay differs from the program"
