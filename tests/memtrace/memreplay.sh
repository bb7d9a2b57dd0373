#!/usr/bin/env bash
# `tracefold memreplay --raw`: the reference stream of a raw log as text,
# field for field what the tests' own reader (normalised.py) finds in the
# streams, in the documented interleaving order; and memreplay's refusals
# of bad input. $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { echo "FAIL: no tracefold binary ($TF)" >&2; exit 1; }
N=500
run() {
  RC=0
  timeout "$RUN_TIMEOUT" "$TF" "$@" >out.txt 2>err.txt || RC=$?
}

run memtrace -q --wait-for-start --raw-log raw -- "$K/vadd_slices" 3 $N
[[ $RC == 0 ]] || bad "vadd_slices: exit $RC: $(tail -3 err.txt)"
T=$(ls raw/thread-*.bin | wc -l)

# --interleave 0: thread 0's whole stream, then thread 1's...
run memreplay raw --raw --interleave 0
[[ $RC == 0 ]] || bad "memreplay --raw: exit $RC: $(cat err.txt)"
head -1 out.txt | grep -q '^# tracefold memreplay raw 1: thread iaddr index size L|S daddr' &&
  ok "versioned header line" || bad "header: $(head -1 out.txt)"
# Columns: thread iaddr index size L|S daddr context kind region ordinal owner offset;
# normalised.py prints iaddr index size L|S kind region ordinal owner offset.
tail -n +2 out.txt | awk '{ print $2, $3, $4, $5, $8, $9, $10, $11, $12 }' >mine.txt
for ((t = 0; t < T; t++)); do python3 "$SRC/tests/memtrace/normalised.py" raw/thread-$t.bin; done >theirs.txt
lines=$(wc -l <mine.txt)
((lines > 3 * 3 * N)) && cmp -s mine.txt theirs.txt &&
  ok "--raw --interleave 0 = the streams in thread order ($lines references)" ||
  bad "--raw differs from normalised.py: $(diff mine.txt theirs.txt | head -5)"
want=$(for ((t = 0; t < T; t++)); do python3 "$SRC/tests/memtrace/normalised.py" raw/thread-$t.bin | wc -l; done | paste -sd' ')
got=$(tail -n +2 out.txt | awk '{ n[$1]++ } END { for (t = 0; t < T; t++) printf "%s%d", t ? " " : "", n[t] }' T="$T")
[[ $got == "$want" ]] && ok "references per thread: $got" || bad "per thread: $got, want $want"

# --interleave 100: threads take turns of 100 references in thread order, a
# thread whose stream has ended dropping out; each keeps its own order.
run memreplay raw --raw --interleave 100
tail -n +2 out.txt | awk '{ print $1 }' >threads.txt
python3 - $want >expected.txt <<'PY'
import sys
left = [int(n) for n in sys.argv[1:]]
while any(left):
    for t, n in enumerate(left):
        turn = min(100, n)
        sys.stdout.write(f"{t}\n" * turn)
        left[t] -= turn
PY
cmp -s threads.txt expected.txt && ok "round-robin turns of 100 references" ||
  bad "turns: $(diff threads.txt expected.txt | head -5)"
tail -n +2 out.txt | sort -s -k1,1n | awk '{ print $2, $3, $4, $5, $8, $9, $10, $11, $12 }' >sorted.txt
cmp -s sorted.txt theirs.txt && ok "each thread's own order kept" || bad "per-thread order changed"

# Sites are named only inside a listed module's loaded segments: 20,000
# loads at an instruction address 1 MiB above the executable's base (past
# its last segment; nothing is mapped there) make a site (memtrace-stats's
# busiest), which must have no name rather than the executable's name plus
# an offset.
cp -r raw far
python3 - far/thread-1.bin <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
rec = bytearray(data[24:72])
struct.pack_into("<Q", rec, 0, 0x500000)
open(path, "ab").write(bytes(rec) * 20000)
PY
run memreplay far --cache L1=32K:8:64 --top 1000
far=$(awk '$1 == "500000" { $1 = $1; print }' out.txt)
near=$(awk '$1 ~ /^40/ && / vadd / { print; exit }' out.txt)
[[ $RC == 0 && -n $far && ! $far =~ vadd_slices && -n $near ]] &&
  ok "memreplay: no name past the executable's end ($far), vadd inside it" ||
  bad "memreplay names: exit $RC, far '$far', near '$near'"
run memtrace-stats far --top 1
far=$(awk '$1 == "500000" { $1 = $1; print }' out.txt)
[[ $RC == 0 && -n $far && ! $far =~ vadd_slices ]] &&
  ok "memtrace-stats: no name past the executable's end" || bad "memtrace-stats: '$far'"

# Bad input.
run memreplay raw --cache L1=32K:8:48
[[ $RC == 2 ]] && grep -q "'L1=32K:8:48': line size 48 is not a power of two" err.txt &&
  ok "a bad line size named" || bad "line size: exit $RC, $(cat err.txt)"
run memreplay raw --cache L1=32K:8:64,L2=1000K:16:64
[[ $RC == 2 ]] && grep -q "'L2=1000K:16:64': 1000 sets .* is not a power of two" err.txt &&
  ok "a set count not a power of two named" || bad "sets: exit $RC, $(cat err.txt)"
run memreplay raw
[[ $RC == 2 ]] && grep -q "give --raw .* or --cache" err.txt && ok "neither --raw nor --cache refused" ||
  bad "no mode: exit $RC, $(cat err.txt)"
cp -r raw cut
truncate -s -5 cut/thread-1.bin
run memreplay cut --cache L1=32K:8:64
[[ $RC == 2 ]] && grep -q "thread-1.bin: truncated record at offset" err.txt &&
  ok "a truncated stream named with its offset" || bad "truncated: exit $RC, $(cat err.txt)"
finish
