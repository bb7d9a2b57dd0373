#!/usr/bin/env bash
# An MPI halo kernel with 2 worker threads per rank (kernels/halo.c), one
# tracefold-mem per rank under mpirun, the ranks' logs folded into one
# trace: lossless for every stream of every rank (contexts compared by
# call path: each rank numbers them its own way), and the trace of 8 ranks
# at most 5 % larger than that of 2 (the edge ranks differ from the
# interior ones; ranks' heap blocks lie at addresses of their own).
# $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
RANKVAR=OMPI_COMM_WORLD_RANK
"$MPIRUN" --version 2>&1 | grep -qi 'hydra\|mpich' && RANKVAR=PMI_RANK
[[ -x $TF ]] || { bad "no tracefold binary ($TF)"; finish; }
[[ -x $K/halo ]] || { bad "no MPI kernel $K/halo (MPI not found at configure time?)"; finish; }
run() {
  RC=0
  timeout "$RUN_TIMEOUT" "$@" >out.txt 2>err.txt || RC=$?
}

declare -A SIZE
for P in 2 8; do
  dirs=()
  for ((r = 0; r < P; r++)); do
    mkdir -p "raw$P/$r"
    dirs+=("raw$P/$r")
  done
  run "$MPIRUN" -np $P "$TFM" -q --record-at-start=no "--raw-log=raw$P/%q{$RANKVAR}" \
    "$K/halo" 8 32 3
  [[ $RC == 0 ]] || { bad "$P ranks: mpirun exited $RC: $(tail -3 err.txt)"; continue; }
  run "$TF" memtrace-fold "${dirs[@]}" -o "halo$P.tf"
  [[ $RC == 0 ]] || { bad "$P ranks: memtrace-fold exit $RC: $(cat err.txt)"; continue; }
  SIZE[$P]=$(stat -c %s "halo$P.tf")
  # Every log's replay with its contexts as paths, log after log, against
  # the folded trace's streams with the trace's own table's paths.
  for d in "${dirs[@]}"; do
    run "$TF" memreplay "$d" --raw --interleave 0
    python3 "$SRC/tests/memtrace/ctxpaths.py" "$d/contexts.bin" <out.txt
  done >"raw$P.txt"
  run "$TF" memreplay "halo$P.tf" --raw --interleave 0
  cp out.txt replay.txt
  run "$TF" convert "halo$P.tf" -o - --text
  python3 "$SRC/tests/memtrace/ctxpaths.py" --trace out.txt <replay.txt >"fold$P.txt"
  n=$(wc -l <"raw$P.txt")
  if ((n > 1000)) && cmp -s "raw$P.txt" "fold$P.txt"; then
    ok "$P ranks: lossless, $n references in ${SIZE[$P]} bytes"
  else
    bad "$P ranks: expansion differs from the logs: $(diff "raw$P.txt" "fold$P.txt" | head -4)"
  fi
done
a=${SIZE[2]:-0} b=${SIZE[8]:-0}
if ((a > 0 && b > 0 && 100 * (b - a) <= 5 * a)); then
  ok "8 ranks ($b B) within 5 % of 2 ranks ($a B)"
else
  bad "8 ranks ($b B) more than 5 % over 2 ranks ($a B)"
fi
finish
