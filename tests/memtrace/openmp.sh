#!/usr/bin/env bash
# OpenMP: a static schedule over T threads gives T streams (the main thread
# and libgomp's T-1 workers, in creation order), each running the outlined
# loop body once over N/T = m elements. In that body (objdump of vadd_omp):
# stores = 3 pushes + 2 calls' return addresses + m; loads = 1 (trip count
# from the shared struct) + 3 (array pointers) + 2m + 3 pops + ret = 2m + 8.
# OMP_WAIT_POLICY=passive: libgomp's spin-waits are library code, filtered
# here; with --libs=yes they make the streams differ between runs (three runs
# of this kernel: worker streams varied by up to ~1,000 records with the
# default policy, by up to ~20 with passive).
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $K/vadd_omp ]] || { bad "no OpenMP kernel $K/vadd_omp (OpenMP not found at configure time?)"; finish; }
export OMP_NUM_THREADS=3 OMP_WAIT_POLICY=passive
T=3 N=3000 m=1000
read -r LO HI < <(sym "$K/vadd_omp" vadd._omp_fn.0)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
mkdir raw
tfm out.txt err.txt --record-at-start=no --raw-log=raw "$K/vadd_omp" $N
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
grep -q "vadd_omp n=$N sum=$((2 * N)).0" out.txt && ok "program output" || bad "output: $(cat out.txt)"
for ((k = 0; k < T; k++)); do
  if [[ ! -f raw/thread-$k.bin ]]; then
    bad "no raw/thread-$k.bin: $(ls raw | tr '\n' ' ')"
    continue
  fi
  c=$(rawcount raw/thread-$k.bin "$LO" "$HI")
  if [[ $(field in_loads "$c") == $((2 * m + 8)) && $(field in_stores "$c") == $((m + 5)) ]]; then
    ok "thread $k: $((2 * m + 8)) loads, $((m + 5)) stores in the loop body"
  else
    bad "thread $k: $(field in_loads "$c") loads, $(field in_stores "$c") stores; want $((2 * m + 8)), $((m + 5))"
  fi
done
[[ ! -e raw/thread-$T.bin ]] && ok "$T streams" || bad "more than $T streams: $(ls raw | tr '\n' ' ')"
finish
