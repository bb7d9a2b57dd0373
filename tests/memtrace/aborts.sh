#!/usr/bin/env bash
# A program that aborts keeps its exit status (SIGABRT: 134 from the shell)
# under tracefold-mem, and the streams hold what was recorded up to the abort:
# the N stores of its loop, more than one buffer of records.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
N=20000
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
(timeout 60 "$K/aborts" $N >native.txt 2>/dev/null) && NRC=0 || NRC=$?
mkdir raw
tfm out.txt err.txt --raw-log=raw "$K/aborts" $N
[[ $NRC == 134 && $RC == 134 ]] && ok "exit status 134 natively and under the tool" \
  || bad "exit status $NRC natively, $RC under the tool"
cmp -s native.txt out.txt && ok "stdout unchanged" || bad "stdout differs: $(cat out.txt)"
c=$(rawcount raw/thread-0.bin) || bad "stream unreadable after abort"
echo "$c"
(($(field stores "$c") >= N)) && ok "$(field stores "$c") stores kept (N = $N)" \
  || bad "only $(field stores "$c") stores kept, want >= $N"
[[ -s raw/contexts.bin ]] && ok "contexts written" || bad "no contexts.bin after abort"
finish
