#!/usr/bin/env bash
# The IR access kinds beyond plain loads and stores, each in its own
# function of irkinds.c, counted by hand and against lackey:
#   masked  guarded loads/stores (AVX2 vmaskmovpd, lanes 0 and 2 of 4): the
#           32-byte mask constant, two 8-byte lane loads, two 8-byte lane
#           stores, ret -> 4 loads (56 bytes), 2 stores (16 bytes); the
#           lanes' accesses have indices 0 and 2 (an access's index is its
#           slot in the instruction, a lane whose guard is false skips one);
#   atomic  lock xadd: VEX loads the old value, then a CAS (a load and a
#           store), ret -> 3 loads (24 bytes), 1 store (8 bytes);
#   fxsave  a dirty helper's memory effect plus the XMM stores: lackey's
#           counts and bytes, and at least the 160-byte helper store.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
B=$K/irkinds
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }

grep -qw avx2 /proc/cpuinfo || bad "this CPU has no AVX2: irkinds' masked moves cannot run"
timeout 60 "$B" >native.txt 2>&1 || bad "kernel failed natively"
mkdir raw
tfm out.txt err.txt --raw-log=raw "$B"
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 err.txt)"
cmp -s native.txt out.txt && ok "stdout unchanged" || bad "stdout differs: $(cat out.txt)"
timeout "$RUN_TIMEOUT" valgrind --tool=lackey --trace-mem=yes --log-file=lackey.txt "$B" \
  >/dev/null 2>&1 || bad "lackey run failed"

declare -A want=([masked]="loads=4 stores=2 load_bytes=56 store_bytes=16"
  [atomic]="loads=3 stores=1 load_bytes=24 store_bytes=8")
for f in masked atomic fxsave; do
  read -r lo hi < <(sym "$B" $f)
  c=$(rawcount raw/thread-0.bin "$lo" "$hi")
  ours="loads=$(field in_loads "$c") stores=$(field in_stores "$c") load_bytes=$(field in_load_bytes "$c") store_bytes=$(field in_store_bytes "$c")"
  lk=$(python3 "$SRC/tests/memtrace/lackey_count.py" lackey.txt "$lo" "$hi" --bytes)
  [[ $ours == "$lk" ]] && ok "$f: lackey agrees ($lk)" || bad "$f: ours $ours, lackey $lk"
  if [[ -n ${want[$f]:-} ]]; then
    [[ $ours == "${want[$f]}" ]] && ok "$f: hand count" || bad "$f: ours $ours, by hand ${want[$f]}"
  fi
  if [[ $f == fxsave ]]; then
    [[ ,$(field in_sizes "$c"), == *,160,* ]] && ok "fxsave: the dirty helper's 160-byte store" \
      || bad "fxsave sizes $(field in_sizes "$c"), no 160-byte store"
  fi
done

# Access indices: records grouped by instruction, in order, within masked.
read -r lo hi < <(sym "$B" masked)
python3 - raw/thread-0.bin "$lo" "$hi" >idx.txt <<'PY'
import struct, sys
lo, hi = int(sys.argv[2]), int(sys.argv[3])
for iaddr, _d, _c, size, idx, flags in struct.iter_unpack("<QQIHBB24x", open(sys.argv[1], "rb").read()[24:]):
    if lo <= iaddr < hi:
        print(f"{iaddr - lo} {'S' if flags & 1 else 'L'}{size} {idx}")
PY
cat idx.txt
# vmovdqa at +0, vmaskmovpd load at +8, store at +13, ret at +18 (objdump).
[[ $(tr '\n' ';' <idx.txt) == "0 L32 0;8 L8 0;8 L8 2;13 S8 0;13 S8 2;18 L8 0;" ]] \
  && ok "per-instruction access indices" || bad "indices: $(tr '\n' ';' <idx.txt)"
finish
