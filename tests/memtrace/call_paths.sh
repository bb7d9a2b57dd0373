#!/usr/bin/env bash
# Call-path contexts from the shadow stack: the accesses inside vadd carry
# the context of the path that reached it. paths.c reaches vadd along four
# paths (main>via_a>vadd from two call sites of main, main>via_b>vadd from
# two call sites of via_b); the first is taken twice (from one call site in
# a loop), so its context holds
# twice 2N+1 loads and 2N stores, the others once. Context ids are shared:
# the same path twice is one id.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
N=400
read -r LO HI < <(sym "$K/paths" vadd)
mkdir raw
tfm out.txt err.txt --record-at-start=no --raw-log=raw "$K/paths" $N
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
python3 "$SRC/tests/memtrace/contexts.py" raw/thread-0.bin raw/contexts.bin "$K/paths" "$LO" "$HI" \
  >ctx.txt || bad "contexts unreadable"
cat ctx.txt
l=$((2 * N + 1)) s=$N
# (_start, in the executable, calls main through libc.)
want="loads=$((2 * l)) stores=$((2 * s)) path=_start>main>via_a
loads=$l stores=$s path=_start>main>via_b
loads=$l stores=$s path=_start>main>via_b
loads=$l stores=$s path=_start>main>via_a"
got=$(sed 's/^ctx=[0-9]* //' ctx.txt)
[[ $got == "$want" ]] && ok "four contexts with the expected counts and paths" \
  || bad "contexts: got
$got
want
$want"
ids=$(sed 's/^ctx=\([0-9]*\) .*/\1/' ctx.txt | sort -u | wc -l)
[[ $ids == 4 ]] && ok "four distinct ids" || bad "$ids distinct context ids, want 4"

# --call-paths=no: no contexts file, every record in context 0.
mkdir nopaths
tfm out.txt err.txt --record-at-start=no --call-paths=no --raw-log=nopaths "$K/paths" $N
[[ ! -e nopaths/contexts.bin ]] && ok "--call-paths=no writes no contexts" \
  || bad "--call-paths=no wrote contexts.bin"
python3 - nopaths/thread-0.bin <<'PY' && ok "--call-paths=no: all records in context 0" || bad "nonzero contexts with --call-paths=no"
import struct, sys
body = open(sys.argv[1], "rb").read()[24:]
sys.exit(any(r[2] for r in struct.iter_unpack("<QQIHBB24x", body)))
PY
finish
