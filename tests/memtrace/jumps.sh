#!/usr/bin/env bash
# The shadow stack after longjmp: deep() recurses DEPTH times and jumps back
# to main without returning; main then calls touch(). touch's 100 stores
# (and one load, its ret) must be in the context _start>main (touch's call
# site in main), not below the abandoned deep() frames, and there must be
# exactly one context for them.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
read -r LO HI < <(sym "$K/jumps" touch)
mkdir raw
tfm out.txt err.txt --raw-log=raw "$K/jumps" 6
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
grep -q "jumps depth=6 sink=21 a99=99" out.txt && ok "program output" || bad "output: $(cat out.txt)"
python3 "$SRC/tests/memtrace/contexts.py" raw/thread-0.bin raw/contexts.bin "$K/jumps" "$LO" "$HI" \
  >ctx.txt || bad "contexts unreadable"
cat ctx.txt
[[ $(sed 's/^ctx=[0-9]* //' ctx.txt) == "loads=1 stores=100 path=_start>main" ]] \
  && ok "touch runs in _start>main after the longjmp" || bad "touch's contexts: $(cat ctx.txt)"
finish
