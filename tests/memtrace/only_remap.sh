#!/usr/bin/env bash
# --only=FUNC decides per call target whether it is FUNC's entry and keeps
# the answer; code unmapped must take its answers along. only_remap calls
# target_fn in one library (100 stores), closes it, and calls others_fn in
# another library mapped at the same address, at target_fn's old address
# (37 stores): with --only=target_fn only the first call is recorded.
# $4 is the tracefold binary.
TFM=$1 SRC=$2 K=$3 TF=${4:-}
source "$SRC/tests/memtrace/memtrace_lib.bash"
[[ -x $TF ]] || { echo "FAIL: no tracefold binary ($TF)" >&2; exit 1; }
RC=0
timeout "$RUN_TIMEOUT" "$TF" memtrace -q --libs --only target_fn --raw-log raw -- \
  "$K/only_remap" "$K" >out.txt 2>err.txt || RC=$?
[[ $RC == 0 ]] || bad "only_remap: exit $RC: $(tail -3 err.txt)"
a=$(awk '$1 == "target_fn" { print $2 }' out.txt)
b=$(awk '$1 == "others_fn" { print $2 }' out.txt)
# The check means something only if the second function took the first's address.
[[ -n $a && $a == "$b" ]] && ok "others_fn at target_fn's old address ($a)" ||
  bad "the libraries were not mapped at the same address ($a, $b): nothing to check"
c=$(rawcount raw/thread-0.bin)
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }
[[ $(field stores "$c") == 100 && $(field loads "$c") == 1 ]] &&
  ok "only target_fn's 100 stores (and its ret's load) recorded" || bad "recorded: $c"
finish
