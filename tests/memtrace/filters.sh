#!/usr/bin/env bash
# Filters: --only=FUNC records only while a call to FUNC is on the shadow
# stack, --addr-range only accesses to the given data addresses. The paths
# kernel calls vadd five times (2N+1 loads, N stores each: a[i], b[i], ret;
# c[i]), twice of them from via_b.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
N=300
B=$K/paths
read -r LO HI < <(sym "$B" vadd)
read -r BLO BHI < <(sym "$B" via_b)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }

mkdir vadd
tfm out.txt err.txt --record-at-start=no --only=vadd --raw-log=vadd "$B" $N
[[ $RC == 0 ]] || bad "--only=vadd: exit $RC: $(tail -2 err.txt)"
c=$(rawcount vadd/thread-0.bin "$LO" "$HI")
if [[ $(field loads "$c") == $((5 * (2 * N + 1))) && $(field stores "$c") == $((5 * N)) &&
  $(field in_loads "$c") == $((5 * (2 * N + 1))) ]]; then
  ok "--only=vadd: the five calls' 5(2N+1) loads and 5N stores, nothing else"
else
  bad "--only=vadd: $c"
fi

mkdir viab
tfm out.txt err.txt --record-at-start=no --only=via_b --raw-log=viab "$B" $N
c=$(rawcount viab/thread-0.bin "$LO" "$HI")
[[ $(field in_loads "$c") == $((2 * (2 * N + 1))) && $(field in_stores "$c") == $((2 * N)) ]] &&
  ok "--only=via_b: vadd's accesses of the two calls from via_b" || bad "--only=via_b: $c"
python3 - viab/thread-0.bin "$LO" "$HI" "$BLO" "$BHI" <<'PY' && ok "--only=via_b: no access outside via_b and vadd" || bad "--only=via_b: accesses outside via_b and vadd"
import struct, sys
lo, hi, blo, bhi = map(int, sys.argv[2:])
recs = list(struct.iter_unpack("<QQIHBB24x", open(sys.argv[1], "rb").read()[24:]))
sys.exit(not recs or any(not (lo <= r[0] < hi or blo <= r[0] < bhi) for r in recs))
PY

mkdir none
tfm out.txt err.txt --record-at-start=no --only=no_such_function --raw-log=none "$B" $N
c=$(rawcount none/thread-0.bin)
[[ $(field records "$c") == 0 ]] && grep -q -- "--only=no_such_function: no call" err.txt &&
  ok "--only of an unknown function: nothing recorded, and said" || bad "--only=no_such_function: $c"
tfm out.txt err.txt --only=vadd --call-paths=no "$B" $N
[[ $RC == 1 ]] && grep -q -- "--only needs the shadow stack" err.txt &&
  ok "--only with --call-paths=no refused" || bad "--only --call-paths=no: exit $RC"

# --addr-range: the span of c (vadd's stores) from a full run, then only it.
mkdir full
tfm out.txt err.txt --record-at-start=no --raw-log=full "$B" $N
read -r clo chi cmid < <(python3 - full/thread-0.bin "$LO" "$HI" <<'PY'
import struct, sys
lo, hi = int(sys.argv[2]), int(sys.argv[3])
s = [r[1] for r in struct.iter_unpack("<QQIHBB24x", open(sys.argv[1], "rb").read()[24:])
     if lo <= r[0] < hi and r[5] & 1]
print(min(s), max(s) + 8, (min(s) + max(s) + 8) // 2)
PY
)
mkdir range
tfm out.txt err.txt --record-at-start=no --addr-range=$(printf '0x%x-0x%x' $clo $chi) --raw-log=range "$B" $N
c=$(rawcount range/thread-0.bin "$LO" "$HI")
[[ $(field records "$c") == $((5 * N)) && $(field in_stores "$c") == $((5 * N)) ]] &&
  ok "--addr-range over c: its 5N stores only" || bad "--addr-range: $c"
mkdir range2
tfm out.txt err.txt --record-at-start=no --addr-range=$clo-$cmid,$cmid-$chi --raw-log=range2 "$B" $N
c=$(rawcount range2/thread-0.bin "$LO" "$HI")
[[ $(field records "$c") == $((5 * N)) ]] && ok "--addr-range with two decimal ranges" ||
  bad "--addr-range (two): $c"
mkdir range3
tfm out.txt err.txt --record-at-start=no --addr-range=$clo-$cmid --raw-log=range3 "$B" $N
c=$(rawcount range3/thread-0.bin "$LO" "$HI")
[[ $(field records "$c") == $((5 * ((cmid - clo + 7) / 8))) ]] && ok "--addr-range over half of c" ||
  bad "--addr-range (half): $c"
failed=${#FAILURES[@]}
for spec in 0x10-5x 20-10 abc 1-2,; do
  tfm out.txt err.txt --addr-range=$spec "$B" $N
  [[ $RC == 1 ]] && grep -q "addr-range wants" err.txt || bad "--addr-range=$spec accepted (exit $RC)"
done
((${#FAILURES[@]} == failed)) && ok "malformed --addr-range refused"
finish
