#!/usr/bin/env bash
# memtrace-fold --canonical: two recordings of the same deterministic
# program fold to the same bytes, though the second runs with a larger
# environment (its main stack starts elsewhere, so raw stack addresses
# differ). The plain folds of the two differ (they keep the run's
# addresses); the canonical one keeps every normalised field of every
# reference. $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { echo "FAIL: no tracefold binary ($TF)" >&2; exit 1; }
T=3 N=400
run() {
  RC=0
  timeout "$RUN_TIMEOUT" "$TF" "$@" >out.txt 2>err.txt || RC=$?
}

run memtrace -q --wait-for-start --raw-log raw1 -- "$K/vadd_slices" $T $N
[[ $RC == 0 ]] || bad "first run: exit $RC: $(tail -3 err.txt)"
PADDING=$(printf 'x%.0s' {1..3000}) run memtrace -q --wait-for-start --raw-log raw2 -- "$K/vadd_slices" $T $N
[[ $RC == 0 ]] || bad "second run: exit $RC: $(tail -3 err.txt)"
cmp -s raw1/thread-0.bin raw2/thread-0.bin && bad "the two runs' raw streams are the same: nothing moved"

for r in 1 2; do
  run memtrace-fold raw$r -o plain$r.txt --text
  [[ $RC == 0 ]] || bad "fold raw$r: exit $RC: $(cat err.txt)"
  run memtrace-fold raw$r -o canon$r.txt --text --canonical
  [[ $RC == 0 ]] || bad "fold --canonical raw$r: exit $RC: $(cat err.txt)"
  run memtrace-fold raw$r -o canon$r.tf --canonical
  [[ $RC == 0 ]] || bad "fold --canonical raw$r (compact): exit $RC: $(cat err.txt)"
done
cmp -s plain1.txt plain2.txt && bad "the plain folds are the same: the test moves nothing" ||
  ok "plain folds differ ($(diff plain1.txt plain2.txt | grep -c '^<') lines)"
cmp -s canon1.txt canon2.txt && ok "canonical folds identical (text)" ||
  bad "canonical folds differ: $(diff canon1.txt canon2.txt | head -6)"
cmp -s canon1.tf canon2.tf && ok "canonical folds identical (compact)" || bad "compact forms differ"

# Lossless but for the data address and the context ids (renumbered): the
# references' sites, sizes, directions, kinds, ordinals, owners, offsets.
fields() { awk 'NR > 1 { print $1, $2, $3, $4, $5, $8, ($8 == "heap" ? "-" : $9), $10, $11, $12 }'; }
run memreplay raw2 --raw
fields <out.txt >raw.fields
run memreplay canon2.tf --raw
fields <out.txt >canon.fields
lines=$(wc -l <raw.fields)
((lines > T * 3 * N)) && cmp -s raw.fields canon.fields &&
  ok "canonical trace expands to the normalised stream ($lines references)" ||
  bad "expansion differs from the raw log: $(diff raw.fields canon.fields | head -4)"
finish
