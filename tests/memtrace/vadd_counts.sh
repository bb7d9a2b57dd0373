#!/usr/bin/env bash
# Loads and stores of the vector-add kernel, counted three ways: by hand,
# from tracefold-mem's raw stream, and from lackey's --trace-mem=yes output.
# Inside vadd (its address range from nm; the kernels are not PIE) the loop
# makes 2N loads and N stores of 8 bytes, and the final `ret` one more 8-byte
# load (the return address); nothing else touches memory there.
# Also checks the filters: START/STOP bound the stream, code outside the
# executable is left out unless --libs=yes.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
N=3000
read -r LO HI < <(sym "$K/vadd" vadd)
want_loads=$((2 * N + 1)) want_stores=$N
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<"$2"; }

# Between START and STOP only.
mkdir se
tfm out.txt err.txt --record-at-start=no --raw-log=se "$K/vadd" $N
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
c=$(rawcount se/thread-0.bin "$LO" "$HI")
echo "start/stop: $c"
[[ $(field in_loads "$c") == "$want_loads" ]] && ok "loads in vadd = 2N+1 = $want_loads" \
  || bad "loads in vadd: $(field in_loads "$c"), want $want_loads"
[[ $(field in_stores "$c") == "$want_stores" ]] && ok "stores in vadd = N = $N" \
  || bad "stores in vadd: $(field in_stores "$c"), want $N"
[[ $(field in_sizes "$c") == 8 ]] || bad "access sizes in vadd: $(field in_sizes "$c"), want 8"
[[ $(field in_distinct_stores "$c") == "$N" && $(field in_store_run "$c") == 1 ]] \
  && ok "stores hit N consecutive 8-byte words" \
  || bad "stored addresses: $(field in_distinct_stores "$c") distinct, run=$(field in_store_run "$c")"
# Outside vadd between START and STOP: the call, the STOP request's argument
# block and main's own few instructions; a handful, not the init loop's 2N.
total=$(field records "$c")
extra=$((total - want_loads - want_stores))
((extra >= 1 && extra < 40)) && ok "$extra accesses outside vadd between START and STOP" \
  || bad "$extra accesses outside vadd between START and STOP (want 1..39)"

# From the first instruction: the init loop's 2N stores are there too.
mkdir all
tfm out.txt err.txt --raw-log=all "$K/vadd" $N
a=$(rawcount all/thread-0.bin "$LO" "$HI")
echo "from start: $a"
[[ $(field in_loads "$a") == "$want_loads" && $(field in_stores "$a") == "$want_stores" ]] \
  || bad "from start, counts in vadd differ: $a"
(($(field stores "$a") >= 3 * N)) && ok "from start: init loop's stores recorded" \
  || bad "from start: only $(field stores "$a") stores"
# Application image only: every instruction address inside the executable's
# loaded segments (not PIE: their addresses are the ones readelf prints).
read -r elo ehi < <(image_range "$K/vadd")
(($(field min_iaddr "$a") >= elo && $(field max_iaddr "$a") < ehi)) \
  && ok "only the executable's code by default" \
  || bad "instructions $(field min_iaddr "$a")..$(field max_iaddr "$a") outside [$elo, $ehi)"

mkdir libs
tfm out.txt err.txt --libs=yes --raw-log=libs "$K/vadd" $N
l=$(rawcount libs/thread-0.bin "$LO" "$HI")
echo "with libs: $l"
(($(field max_iaddr "$l") >= ehi && $(field records "$l") > $(field records "$a") + 1000)) \
  && ok "--libs=yes adds library and loader accesses" || bad "--libs=yes changed nothing: $l"
[[ $(field in_loads "$l") == "$want_loads" && $(field in_stores "$l") == "$want_stores" ]] \
  || bad "with --libs, counts in vadd differ: $l"

# Lackey over the same kernel, filtered by the same address range.
timeout "$RUN_TIMEOUT" valgrind --tool=lackey --trace-mem=yes --log-file=lackey.txt \
  "$K/vadd" $N >/dev/null 2>&1 || bad "lackey run failed"
lk=$(python3 "$SRC/tests/memtrace/lackey_count.py" lackey.txt "$LO" "$HI")
echo "lackey: $lk"
[[ $lk == "loads=$want_loads stores=$want_stores" ]] && ok "lackey agrees: $lk" \
  || bad "lackey: $lk, tracefold-mem: loads=$want_loads stores=$want_stores"
finish
