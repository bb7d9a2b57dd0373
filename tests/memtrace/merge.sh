#!/usr/bin/env bash
# `tracefold merge` of folded memory traces: the MPI halo kernel (2 worker
# threads a rank) recorded at 4 ranks under mpirun, ranks 0-1 and 2-3
# folded apart and merged, against the fold of all 4 logs at once: the same
# file byte for byte, and every stream expands to its own log's references
# with each context the call path its log gives it. The trace merged with
# itself is the fold of its logs twice over; a trace of another program is
# refused, naming the file. $4 is the tracefold binary.
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
must() {
  run "$@"
  [[ $RC == 0 ]] || { bad "$* exited $RC: $(tail -3 err.txt)"; finish; exit 1; }
}

mkdir -p raw/0 raw/1 raw/2 raw/3
must "$MPIRUN" -np 4 "$TFM" -q --record-at-start=no "--raw-log=raw/%q{$RANKVAR}" "$K/halo" 8 32 3
must "$TF" memtrace-fold raw/0 raw/1 raw/2 raw/3 -o whole.tf
must "$TF" memtrace-fold raw/0 raw/1 -o low.tf
must "$TF" memtrace-fold raw/2 raw/3 -o high.tf
must "$TF" merge low.tf high.tf -o merged.tf
if cmp -s merged.tf whole.tf; then
  ok "merge of ranks 0-1 and 2-3: the fold of all 4 logs, byte for byte ($(stat -c %s whole.tf) B)"
else
  bad "merge of ranks 0-1 and 2-3 ($(stat -c %s merged.tf) B) differs from the fold of all logs" \
    "($(stat -c %s whole.tf) B)"
fi

# Each stream against its own log, contexts as call paths on both sides.
for d in raw/0 raw/1 raw/2 raw/3; do
  must "$TF" memreplay "$d" --raw --interleave 0
  python3 "$SRC/tests/memtrace/ctxpaths.py" "$d/contexts.bin" <out.txt
done >raw.txt
must "$TF" memreplay merged.tf --raw --interleave 0
cp out.txt replay.txt
must "$TF" convert merged.tf -o - --text
python3 "$SRC/tests/memtrace/ctxpaths.py" --trace out.txt <replay.txt >merged.txt
n=$(wc -l <raw.txt)
if ((n > 1000)) && cmp -s raw.txt merged.txt; then
  ok "merged trace lossless against the 4 logs ($n references)"
else
  bad "merged trace differs from the logs: $(diff raw.txt merged.txt | head -4)"
fi

# One run merged with itself: as if the kernel had run twice.
must "$TF" merge whole.tf whole.tf -o twice.tf
must "$TF" memtrace-fold raw/0 raw/1 raw/2 raw/3 raw/0 raw/1 raw/2 raw/3 -o twice-fold.tf
cmp -s twice.tf twice-fold.tf && ok "a trace merged with itself: the fold of its logs twice" ||
  bad "a trace merged with itself differs from the fold of its logs twice"

# Another program is refused, naming its file.
mkdir rawv
tfm out.txt err.txt -q --raw-log=rawv -- "$K/vadd_slices" 2 256
[[ $RC == 0 ]] || bad "vadd_slices under the tool exited $RC: $(tail -3 err.txt)"
must "$TF" memtrace-fold rawv -o vadd.tf
run "$TF" merge whole.tf vadd.tf -o bad.tf
if [[ $RC != 0 ]] && grep -q "vadd.tf: traced .*vadd_slices.* different programs" err.txt &&
  [[ ! -e bad.tf ]]; then
  ok "a trace of another program refused: $(head -1 err.txt)"
else
  bad "merge with another program's trace: exit $RC, $(head -2 err.txt)"
fi
finish
