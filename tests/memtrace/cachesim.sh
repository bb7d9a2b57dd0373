#!/usr/bin/env bash
# `tracefold memreplay --cache` against cachegrind: the same one-thread
# kernel (matmul, B walked by columns so that B does not fit the L1 and the
# misses depend on what LRU keeps) recorded with --raw-log and replayed
# through cachegrind's D1 geometry gives within 1 % of the data-read plus
# data-write D1 misses that `valgrind --tool=cachegrind --cache-sim=yes`
# counts for it.
#
# Both must count the same accesses. Cachegrind sees every data access of
# the process from its first instruction, the dynamic loader and libc
# included, so the recording is of the whole run with --libs. The kernel's
# matrices are statics, at the same addresses in both runs; cachegrind runs
# with the VALGRIND_LIB of the tool (the environment the loader walks is
# then the same). The rest differs a little: the tool's malloc runs inside Valgrind, unrecorded,
# while cachegrind sees glibc's; a read-modify-write instruction is a load
# and a store here and one write for cachegrind (the same misses: the store
# follows the load to the same line). $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { echo "FAIL: no tracefold binary ($TF)" >&2; exit 1; }
N=80
VGLIB=$(sed -n "s/^VALGRIND_LIB='\(.*\)'$/\1/p" "$TFM")
VG=$(sed -n "s/^exec '\([^']*\)'.*/\1/p" "$TFM")
[[ -d $VGLIB && -x $VG ]] || { echo "FAIL: no VALGRIND_LIB or valgrind in $TFM" >&2; exit 1; }

RC=0
timeout "$RUN_TIMEOUT" "$TF" memtrace -q --libs --raw-log raw -- "$K/matmul" $N >tfm.out 2>tfm.err ||
  RC=$?
[[ $RC == 0 ]] || bad "memtrace: exit $RC: $(tail -3 tfm.err)"
RC=0
VALGRIND_LIB=$VGLIB timeout "$RUN_TIMEOUT" "$VG" --tool=cachegrind --cache-sim=yes \
  --D1=32768,8,64 --I1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=cg.out \
  "$K/matmul" $N >cg.stdout 2>cg.err || RC=$?
[[ $RC == 0 ]] || bad "cachegrind: exit $RC: $(tail -3 cg.err)"
cmp -s tfm.out cg.stdout && ok "same program output under both tools" || bad "outputs differ"

# cachegrind's totals: the "events:" line names the columns of "summary:".
read -r cg_dr cg_d1mr cg_dw cg_d1mw < <(awk '
  /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
  /^summary:/ { print $(col["Dr"] + 1), $(col["D1mr"] + 1), $(col["Dw"] + 1), $(col["D1mw"] + 1) }' cg.out)
[[ -n ${cg_d1mw:-} ]] || bad "no summary in cg.out"
cg_misses=$((cg_d1mr + cg_d1mw))

RC=0
timeout "$RUN_TIMEOUT" "$TF" memreplay raw --cache D1=32K:8:64 --top 3 >replay.txt 2>replay.err || RC=$?
[[ $RC == 0 ]] || bad "memreplay: exit $RC: $(cat replay.err)"
cat replay.txt
# The level line: name accesses hits misses hit% miss%-of-refs load-misses store-misses.
read -r refs hits misses < <(awk '$1 == "D1" && NF == 8 { print $2, $3, $4 }' replay.txt)
echo "cachegrind: Dr $cg_dr Dw $cg_dw D1mr $cg_d1mr D1mw $cg_d1mw; memreplay: $refs references, $misses D1 misses"
# The kernel's own misses: B's 64,000 column loads alone make thousands.
((misses > 10000)) || bad "only ${misses:-none} D1 misses"
diff=$((misses > cg_misses ? misses - cg_misses : cg_misses - misses))
((diff * 100 <= cg_misses)) &&
  ok "D1 misses $misses within 1 % of cachegrind's $cg_misses (difference $diff)" ||
  bad "D1 misses $misses vs cachegrind's $cg_misses: difference $diff is above 1 %"
[[ $((hits + misses)) == "$refs" ]] && ok "hits + misses = references" || bad "$hits + $misses != $refs"

# The site with the most misses is B's load in matmul, named.
top=$(awk '/ sites by D1 misses/ { getline; getline; print; exit }' replay.txt)
grep -qE ' matmul \(matmul\+0x[0-9a-f]+\)$' <<<"$top" && ok "top site named matmul: $top" ||
  bad "top site: $top"
# Per thread: one thread, all references.
t0=$(awk '$1 == "thread" { getline; print $2; exit }' replay.txt)
[[ $t0 == "$refs" ]] && ok "thread 0 holds all $refs references" || bad "thread 0: $t0"
finish
