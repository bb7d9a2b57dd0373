#!/usr/bin/env bash
# One raw stream per thread, numbered by creation order: with T worker
# threads, thread-0.bin (main) .. thread-T.bin, and stream k holds the
# accesses of the k-th created thread, which adds k*N elements: 2kN+1 loads
# and kN stores inside vadd (the +1: vadd's `ret`). Every second thread is
# joined before the next is created, so Valgrind reuses thread ids while the
# streams must keep counting.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
T=4 N=500
read -r LO HI < <(sym "$K/vadd_threads" vadd)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }

timeout 60 "$K/vadd_threads" $T $N >native.txt 2>&1 || bad "kernel failed natively"
mkdir raw
tfm out.txt err.txt -v -v --record-at-start=no --raw-log=raw "$K/vadd_threads" $T $N
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
cmp -s native.txt out.txt && ok "stdout unchanged" || bad "stdout differs: $(cat out.txt)"
want=$(echo contexts.bin; echo modules.bin; for ((k = 0; k <= T; k++)); do echo "thread-$k.bin"; done)
[[ $(ls raw) == "$want" ]] && ok "$((T + 1)) streams" || bad "streams: $(ls raw | tr '\n' ' ')"
for ((k = 0; k <= T; k++)); do
  [[ -f raw/thread-$k.bin ]] || continue
  c=$(rawcount raw/thread-$k.bin "$LO" "$HI")
  [[ $(field thread "$c") == "$k" ]] || bad "thread-$k.bin says thread $(field thread "$c")"
  if ((k == 0)); then
    wl=0 ws=0
  else
    wl=$((2 * k * N + 1)) ws=$((k * N))
  fi
  if [[ $(field in_loads "$c") == "$wl" && $(field in_stores "$c") == "$ws" ]]; then
    ok "thread $k: $wl loads, $ws stores in vadd"
  else
    bad "thread $k: $(field in_loads "$c") loads, $(field in_stores "$c") stores in vadd; want $wl, $ws"
  fi
done
# Every worker reaches vadd along the same path (libc's thread start >
# worker > vadd): one context id shared by all threads.
ids=$(for ((k = 1; k <= T; k++)); do
  python3 "$SRC/tests/memtrace/contexts.py" raw/thread-$k.bin raw/contexts.bin \
    "$K/vadd_threads" "$LO" "$HI" | sed 's/^ctx=\([0-9]*\) .*path=\(.*\)/\1 \2/'
done | sort -u)
[[ $(wc -l <<<"$ids") == 1 && $ids == *" worker" ]] && ok "workers share context $ids" \
  || bad "worker contexts in vadd: $ids"
# -v -v logs "stream N is Valgrind thread T": a reused id must have been seen.
reused=$(sed -n 's/.*tracefold-mem: stream [0-9]* is Valgrind thread \([0-9]*\)$/\1/p' err.txt |
  sort | uniq -d | head -1)
[[ -n $reused ]] && ok "Valgrind thread $reused carried several streams" \
  || bad "no Valgrind thread id reused: $(grep 'is Valgrind thread' err.txt | tr '\n' ' ')"
grep -q "tracefold-mem: $((T + 1)) threads," err.txt && ok "summary counts $((T + 1)) threads" \
  || bad "summary: $(grep tracefold-mem: err.txt | tail -1)"
finish
