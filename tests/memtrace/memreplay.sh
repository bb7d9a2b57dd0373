#!/usr/bin/env bash
# `tracefold memreplay --raw`: the reference stream of a raw log as text,
# field for field what the tests' own reader (normalised.py) finds in the
# streams, in the documented interleaving order; `--raw-log OUTDIR`: the
# streams as a raw log, equal to the original's; and memreplay's refusals
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

# --raw-log OUTDIR: the streams as the tool writes them. From a raw log,
# byte for byte (headers, pid and the context and module tables too); from
# its folded trace, every record (the trace keeps no pid, so headers are
# compared without it). The compare must see a single wrong field.
same_streams() {  # DIR_A DIR_B HEADER_BYTES: thread files equal past HEADER_BYTES
  local t
  [[ $(ls "$1"/thread-*.bin | wc -l) == $(ls "$2"/thread-*.bin | wc -l) ]] || return 1
  for ((t = 0; t < T; t++)); do
    cmp -s <(tail -c +$(($3 + 1)) "$1/thread-$t.bin") <(tail -c +$(($3 + 1)) "$2/thread-$t.bin") ||
      return 1
  done
}
run memreplay raw --raw-log out
[[ $RC == 0 ]] && same_streams raw out 0 && cmp -s raw/contexts.bin out/contexts.bin &&
  cmp -s raw/modules.bin out/modules.bin &&
  ok "--raw-log of a raw log: $T streams and both tables byte for byte" ||
  bad "--raw-log of a raw log: exit $RC, $(cat err.txt), $(cmp raw/thread-0.bin out/thread-0.bin)"
run memtrace-fold raw -o vadd.tf
[[ $RC == 0 ]] || bad "memtrace-fold: exit $RC: $(cat err.txt)"
run memreplay vadd.tf --raw-log unfolded
[[ $RC == 0 ]] && same_streams raw unfolded 24 &&
  ok "--raw-log of the folded trace: every record of the $T streams" ||
  bad "--raw-log of the folded trace: exit $RC, $(cat err.txt), $(cmp <(tail -c +25 raw/thread-0.bin) <(tail -c +25 unfolded/thread-0.bin))"
same=1
for ((t = 0; t < T; t++)); do
  cmp -s <(head -c 20 raw/thread-$t.bin) <(head -c 20 unfolded/thread-$t.bin) || same=0
done
((same)) && ok "headers equal but for the pid" || bad "headers differ: $(od -An -tx1 -N24 unfolded/thread-0.bin)"
cp -r unfolded wrong
python3 - wrong/thread-1.bin <<'PY2'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[24 + 48 * 7 + 22] ^= 1  # the 8th record's access index
open(path, "wb").write(bytes(data))
PY2
same_streams raw wrong 24 && bad "one wrong access index not seen" || ok "one wrong access index seen"
# Readers of raw logs take it: memreplay prints what it prints for the
# original, memtrace-fold folds it to the same trace.
cmp -s <("$TF" memreplay raw --raw) <("$TF" memreplay unfolded --raw) &&
  ok "memreplay --raw of the regenerated log = of the original" || bad "memreplay --raw differs"
run memtrace-fold out -o out.tf
[[ $RC == 0 ]] && cmp -s vadd.tf out.tf && ok "memtrace-fold of the regenerated log = of the original" ||
  bad "memtrace-fold of the regenerated log: exit $RC, $(cat err.txt), $(cmp vadd.tf out.tf)"
run memreplay raw --raw --raw-log out2
[[ $RC == 2 ]] && grep -q "give --raw .* --raw-log OUTDIR .* or --cache" err.txt &&
  ok "--raw with --raw-log refused" || bad "two modes: exit $RC, $(cat err.txt)"

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
