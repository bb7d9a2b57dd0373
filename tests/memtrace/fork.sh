#!/usr/bin/env bash
# A forked child stops recording: the raw stream is the parent's alone (N
# stores before the fork and 2N after it, not the child's 5N), and the child
# neither writes into nor truncates the parent's files.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
N=3000
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
mkdir raw
tfm out.txt err.txt --raw-log=raw "$K/forks" $N
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
grep -q "forks n=$N child exited 4" out.txt && ok "child ran and exited 4" || bad "output: $(cat out.txt)"
c=$(rawcount raw/thread-0.bin) || bad "stream unreadable"
echo "$c"
s=$(field stores "$c")
((s >= 3 * N && s < 4 * N)) && ok "$s stores: the parent's 3N, not the child's 5N" \
  || bad "$s stores, want 3N..4N ($((3 * N))..$((4 * N)))"
[[ $(ls raw | tr '\n' ' ') == "contexts.bin modules.bin thread-0.bin " ]] && ok "no other files" \
  || bad "files: $(ls raw)"
finish
