#!/usr/bin/env bash
# The tracefold subcommands for memory traces: `tracefold memtrace` runs the
# program under the tool of this build (VALGRIND_LIB set for it, the
# --raw-log directory created, the program's output and exit status its
# own), `tracefold memtrace-stats` summarises a raw log, and both refuse bad
# input with a clear message. $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { echo "FAIL: no tracefold binary ($TF)" >&2; exit 1; }
N=2000
read -r LO HI < <(sym "$K/vadd" vadd)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
run() {
  RC=0
  timeout "$RUN_TIMEOUT" "$TF" "$@" >out.txt 2>err.txt || RC=$?
}

timeout 60 "$K/vadd" $N 5 >native.txt 2>&1 || true
run memtrace --raw-log new/raw --wait-for-start -- "$K/vadd" $N 5
[[ $RC == 5 ]] && ok "the program's exit status (5)" || bad "exit $RC: $(tail -3 err.txt)"
cmp -s native.txt out.txt && ok "stdout unchanged" || bad "stdout: $(cat out.txt)"
c=$(rawcount new/raw/thread-0.bin "$LO" "$HI")
[[ $(field in_loads "$c") == $((2 * N + 1)) && $(field in_stores "$c") == $N ]] &&
  ok "--raw-log created and filled: 2N+1 loads, N stores in vadd" || bad "raw log: $c"
grep -q "tracefold-mem: 1 thread" err.txt && ok "the tool's totals on stderr" ||
  bad "no totals: $(tail -2 err.txt)"

run memtrace -q --only vadd --raw-log only -- "$K/vadd" $N
c=$(rawcount only/thread-0.bin)
[[ $RC == 0 && $(field records "$c") == $((3 * N + 1)) && ! -s err.txt ]] &&
  ok "--only and -q passed on" || bad "--only: exit $RC, $c, stderr $(head -2 err.txt)"

RC=0
TRACEFOLD_MEM_VGLIB=$PWD/nowhere "$TF" memtrace -- "$K/vadd" 10 >out.txt 2>err.txt || RC=$?
[[ $RC == 2 ]] && grep -q "no tracefold-mem-amd64-linux" err.txt && ok "a missing tool named" ||
  bad "missing tool: exit $RC, $(cat err.txt)"
run memtrace --raw-log x
[[ $RC == 2 ]] && grep -q "no program given" err.txt && ok "no program refused" ||
  bad "no program: exit $RC, $(cat err.txt)"

# memtrace-stats on three threads' slices.
run memtrace --wait-for-start --raw-log slices -- "$K/vadd_slices" 3 $N
[[ $RC == 0 ]] || bad "vadd_slices: exit $RC"
run memtrace-stats slices --top 5
[[ $RC == 0 ]] || bad "memtrace-stats: exit $RC: $(cat err.txt)"
cat out.txt
total=0
for k in 0 1 2 3; do total=$((total + $(field records "$(rawcount slices/thread-$k.bin)"))); done
got=$(awk '$1 ~ /^[0-9]+$/ && NF == 5 { s += $2 } END { print s }' out.txt)
[[ $got == "$total" ]] && ok "per-thread references add up to the streams' $total" ||
  bad "per-thread references: $got, want $total"
heap=$(awk '$1 == "heap" { print $2 }' out.txt)
((heap >= 3 * 3 * N)) && ok "heap references: $heap (>= 3 threads x 3N)" || bad "heap: '$heap'"
# The loop's three sites come first, each 3N references with stride 8.
sites=$(awk '/ sites by references/ { on = 1; next } on && $2 ~ /^[0-9]+$/ && $3 == 3 * N { print }' N=$N out.txt)
[[ $(wc -l <<<"$sites") == 3 ]] && ok "three sites of 3N references" || bad "sites: $sites"
grep -qE '^ *[0-9a-f]+ +0 +'$((3 * N))' .* 8 \(99%\) +vadd' <<<"$sites" &&
  ok "stride 8 and the name vadd at the loop's sites" || bad "no 'stride 8 ... vadd' in: $sites"

# Bad input: a truncated stream, a directory without streams.
cp -r slices cut
truncate -s -7 cut/thread-2.bin
run memtrace-stats cut
[[ $RC == 2 ]] && grep -q "thread-2.bin: truncated record at offset" err.txt &&
  ok "a truncated stream named with its offset" || bad "truncated: exit $RC, $(cat err.txt)"
mkdir empty
run memtrace-stats empty
[[ $RC == 2 ]] && grep -q "no thread-N.bin streams" err.txt && ok "an empty directory refused" ||
  bad "empty dir: exit $RC, $(cat err.txt)"
finish
