#!/usr/bin/env bash
# Call paths and statics as module + offset: the position-independent
# vadd_slices recorded twice with the C library loaded at different bases
# (the second run preloads libz, which takes the place libc had; both
# LD_PRELOAD values have the same length, so the stacks stay put). The two
# folded traces expand to the same references, call paths compared as
# module + offset (each process numbers its contexts in its own order), and
# they merge: the second run's streams, moved to the first's layout, are
# the first's. $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { bad "no tracefold binary ($TF)"; finish; }
B=$K/vadd_slices_pie
run() {
  RC=0
  timeout "$RUN_TIMEOUT" "$@" >out.txt 2>err.txt || RC=$?
}
must() {
  run "$@"
  [[ $RC == 0 ]] || { bad "$* exited $RC: $(tail -3 err.txt)"; finish; exit 1; }
}
mkdir a b
must env LD_PRELOAD=libc.so.6 "$TFM" -q --record-at-start=no --raw-log=a "$B" 2 256
must env LD_PRELOAD=libz.so.1 "$TFM" -q --record-at-start=no --raw-log=b "$B" 2 256
must "$TF" memtrace-fold a -o a.tf
must "$TF" memtrace-fold b -o b.tf
must "$TF" convert a.tf -o - --text
cp out.txt a.txt
must "$TF" convert b.tf -o - --text
cp out.txt b.txt
# The load bases differ...
libc_base() { awk '/^module memmod/ && /libc[.]so/ { print $3 }' "$1"; }
ba=$(libc_base a.txt) bb=$(libc_base b.txt)
if [[ -n $ba && -n $bb && $ba != "$bb" ]]; then
  ok "libc loaded at $ba and $bb"
else
  bad "libc's load bases do not differ ('$ba', '$bb'): the test shows nothing"
fi
# ...and nothing else does: each trace expanded, contexts as their call
# paths (module file + offset), the raw addresses of heap blocks and
# stacks left out (threads' stacks and the heap follow the libraries; their
# normalised form is the same).
same() {
  awk '$7 == "heap" || $7 == "stack" { $5 = "-" } { print }' "$@"
}
must "$TF" memreplay a.tf --raw --interleave 0
python3 "$SRC/tests/memtrace/ctxpaths.py" --trace a.txt --relative <out.txt | same >ra.txt
must "$TF" memreplay b.tf --raw --interleave 0
python3 "$SRC/tests/memtrace/ctxpaths.py" --trace b.txt --relative <out.txt | same >rb.txt
n=$(wc -l <ra.txt)
if ((n > 1000)) && cmp -s ra.txt rb.txt && grep -q "libc[.]so[.]6+" ra.txt; then
  ok "the two folded traces expand to the same references ($n), call paths through libc alike"
else
  bad "the folded traces differ: $(diff ra.txt rb.txt | head -4)"
fi
must "$TF" merge a.tf b.tf -o ab.tf
must "$TF" memtrace-fold a b -o fold.tf
cmp -s ab.tf fold.tf && ok "merge = memtrace-fold of both logs" ||
  bad "merge differs from memtrace-fold of both logs"
must "$TF" memreplay ab.tf --raw --interleave 0
# Streams 0-2 are run a's, 3-5 run b's, moved to a's layout: the same.
awk '!/^#/ && $1 < 3 { $1 = ""; print }' out.txt | same >ma.txt
awk '!/^#/ && $1 >= 3 { $1 = ""; print }' out.txt | same >mb.txt
if ((n > 1000)) && cmp -s ma.txt mb.txt; then
  ok "run b's streams in the merge are run a's"
else
  bad "run b's streams in the merge differ from run a's: $(diff ma.txt mb.txt | head -4)"
fi
finish
