#!/usr/bin/env bash
# Call paths and statics as module + offset: the position-independent
# vadd_slices recorded twice with the C library loaded at different bases
# (the second run preloads libz, which takes the place libc had; both
# LD_PRELOAD values have the same length, so the stacks stay put). The
# folded traces are the same but for the load bases in their module
# tables, and they merge: the second run's streams, moved to the first's
# layout, are the first's. $4 is the tracefold binary.
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
# ...and nothing else does.
strip() { sed -E '/^module memmod/s/ base=0x[0-9a-f]+//' "$1"; }
if cmp -s <(strip a.txt) <(strip b.txt); then
  ok "folded traces the same but for load bases ($(stat -c %s a.tf) B)"
else
  bad "folded traces differ: $(diff <(strip a.txt) <(strip b.txt) | head -4)"
fi
must "$TF" merge a.tf b.tf -o ab.tf
must "$TF" memtrace-fold a b -o fold.tf
cmp -s ab.tf fold.tf && ok "merge = memtrace-fold of both logs" ||
  bad "merge differs from memtrace-fold of both logs"
must "$TF" memreplay ab.tf --raw --interleave 0
# Streams 0-2 are run a's, 3-5 run b's: without the thread field, equal.
awk '!/^#/ && $1 < 3 { $1 = ""; print }' out.txt >ra.txt
awk '!/^#/ && $1 >= 3 { $1 = ""; print }' out.txt >rb.txt
n=$(wc -l <ra.txt)
if ((n > 1000)) && cmp -s ra.txt rb.txt; then
  ok "run b's streams in the merge are run a's ($n references)"
else
  bad "run b's streams differ from run a's: $(diff ra.txt rb.txt | head -4)"
fi
finish
