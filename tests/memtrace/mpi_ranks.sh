#!/usr/bin/env bash
# Under mpirun, one tracefold-mem per rank: --raw-log=raw/%q{OMPI_COMM_WORLD_RANK}
# (PMI_RANK with MPICH) gives each rank its own directory, and rank r's main stream holds the
# (r+1)*N stores of fill() (and the one load of its ret). The MPI library's
# own threads get streams of their own (empty: library code is filtered).
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
# The rank's number in the environment: Open MPI's name, or MPICH's (Hydra).
RANKVAR=OMPI_COMM_WORLD_RANK
"$MPIRUN" --version 2>&1 | grep -qi 'hydra\|mpich' && RANKVAR=PMI_RANK
[[ -x $K/ranks ]] || { bad "no MPI kernel $K/ranks (MPI not found at configure time?)"; finish; }
P=3 N=2000
read -r LO HI < <(sym "$K/ranks" fill)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
for ((r = 0; r < P; r++)); do mkdir -p raw/$r; done
RC=0
timeout "$RUN_TIMEOUT" "$MPIRUN" -np $P "$TFM" -q "--raw-log=raw/%q{$RANKVAR}" \
  "$K/ranks" $N >out.txt 2>err.txt || RC=$?
[[ $RC == 0 ]] || bad "mpirun exited $RC: $(tail -5 err.txt)"
# sum over ranks of the last element filled, (r+1)*N - 1
want=0
for ((r = 0; r < P; r++)); do want=$((want + (r + 1) * N - 1)); done
grep -q "ranks $P total $want" out.txt && ok "program output" || bad "output: $(cat out.txt)"
for ((r = 0; r < P; r++)); do
  if [[ ! -f raw/$r/thread-0.bin ]]; then
    bad "rank $r: no raw/$r/thread-0.bin"
    continue
  fi
  c=$(rawcount raw/$r/thread-0.bin "$LO" "$HI")
  ws=$(((r + 1) * N))
  [[ $(field in_stores "$c") == "$ws" && $(field in_loads "$c") == 1 ]] \
    && ok "rank $r: $ws stores and 1 load in fill" \
    || bad "rank $r: $(field in_stores "$c") stores, $(field in_loads "$c") loads in fill; want $ws, 1"
done
finish
