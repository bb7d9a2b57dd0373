#!/usr/bin/env bash
# OpenMP threads under MPI_THREAD_MULTIPLE (tests/apps/omp_halo.c): every
# thread sends to the same thread of the next rank of a periodic ring. The
# trace has one stream per thread, lossless per thread, numbered by OpenMP
# thread number (the `omp` table), and folds alike threads across ranks: its
# node count does not grow with ranks or threads.
set -euo pipefail
TF=$1; SRC=$2; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -x $APPS/app_omp_halo ]] || { echo "no OpenMP: app_omp_halo was not built"; exit 77; }
export OMP_WAIT_POLICY=passive
nodes() { "$TF" print "$1" | head -1 | sed -E 's/.* ([0-9]+) nodes.*/\1/'; }
for run in "2 2" "4 2" "2 4"; do
  set -- $run
  np=$1 nt=$2 d=np$1-nt$2
  "$TF" record -o $d.tf --raw-log $d -- "$MPIRUN" -np $np "$APPS/app_omp_halo" 20 $nt > $d.out 2> $d.err
  if grep -q "not provided" $d.out; then echo "no MPI_THREAD_MULTIPLE here"; exit 77; fi
  grep -q "tracing is off" $d.err && { cat $d.err >&2; fail "$d: tracing went off"; }
  "$TF" diff $d $d.tf | grep -qx "same: $np ranks x $nt threads" || fail "$d: not lossless per thread"
  # Thread t is OpenMP thread t (thread 0 made its first call outside the region).
  "$TF" convert $d.tf --text -o - > $d.txt
  grep -q "^threads $nt$" $d.txt || fail "$d: threads line"
  for ((t = 1; t < nt; t++)); do
    "$TF" expand $d.tf -r 1 -t $t | grep "^MPI_Sendrecv " | grep -vq " tag=$t " &&
      fail "$d: thread $t has a Sendrecv with another tag"
    grep -Eq "^omp .*\b$t @" $d.txt || fail "$d: omp table lacks thread $t"
  done
  echo "$d: $(nodes $d.tf) nodes, $(stat -c %s $d.tf) bytes"
done
[[ $(nodes np2-nt2.tf) -eq $(nodes np4-nt2.tf) ]] || fail "node count grows with ranks"
[[ $(nodes np2-nt2.tf) -eq $(nodes np2-nt4.tf) ]] || fail "node count grows with threads"

# Export: one Perfetto track and one OTF2 location per thread, each with
# its thread's calls (against `expand -r R -t T`); every message ends in a
# receive of its tag, which is the same thread of the next rank here.
d=np2-nt4
mkdir -p $d.expand
for ((r = 0; r < 2; r++)); do
  "$TF" expand $d.tf -r $r > $d.expand/rank-$r.txt
  for ((t = 1; t < 4; t++)); do "$TF" expand $d.tf -r $r -t $t > $d.expand/rank-$r-thread-$t.txt; done
done
"$TF" export $d.tf --perfetto $d.json --otf2 $d.otf2 2> $d.export || { cat $d.export >&2; fail "$d: export"; }
grep -q "unmatched" $d.export && fail "$d: unmatched messages: $(cat $d.export)"
grep -q "2 ranks, 8 threads calling MPI" $d.export || fail "$d: export summary: $(cat $d.export)"
msgs=$(cat $d.expand/*.txt | grep -c "^MPI_Sendrecv ")
python3 "$SRC/tests/data/export_checks.py" perfetto $d.json $d.expand "$msgs" || fail "$d: Perfetto export"
otf2-print $d.otf2/traces.otf2 > $d.otf2.txt 2> $d.otf2.err && [[ ! -s $d.otf2.err ]] ||
  { cat $d.otf2.err >&2; fail "$d: otf2-print"; }
python3 "$SRC/tests/data/export_checks.py" otf2 $d.otf2.txt $d.expand || fail "$d: OTF2 export"
echo "$d: exported $msgs messages over 8 thread tracks and locations"
