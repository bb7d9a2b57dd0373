#!/usr/bin/env bash
# Normalised addresses (raw format version 2). T threads each add their own
# slice of shared heap arrays in vadd, then mark a static, done[k]:
#  - in vadd the threads' normalised streams are the same once each heap
#    block's offsets are taken from the thread's first one (the slice's
#    base), while the slices' bases are k*N*8 apart;
#  - `ret` loads from the thread's own stack (owner = the thread) at the
#    same offset from its base in every thread;
#  - done[k] is static in the executable's module, at done's link-time
#    address + 8k minus the module's first segment, for a fixed-address and
#    a position-independent build (loaded at some base);
#  - two runs with environments of different sizes (the main stack moves)
#    give the same normalised streams in every thread, though the raw
#    addresses of the main thread differ.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"
T=3 N=1000
norm() { python3 "$SRC/tests/memtrace/normalised.py" "$@"; }

for exe in vadd_slices vadd_slices_pie; do
  B=$K/$exe
  mkdir "$exe.1" "$exe.2"
  tfm out.txt err.txt --record-at-start=no --raw-log="$exe.1" "$B" $T $N
  [[ $RC == 0 ]] || bad "$exe: tool run exited $RC: $(tail -3 err.txt)"
  PADDING=$(printf 'x%.0s' {1..3000}) tfm out2.txt err2.txt --record-at-start=no \
    --raw-log="$exe.2" "$B" $T $N
  [[ $RC == 0 ]] || bad "$exe: second run exited $RC: $(tail -3 err2.txt)"
  # The module's load base in this run, from modules.bin, and the image's
  # first segment (link-time), to turn nm's addresses into run addresses.
  read -r base first mod < <(python3 - "$exe.1/modules.bin" "$B" <<'PY'
import os, struct, subprocess, sys
d = open(sys.argv[1], "rb").read()
at, base, ident = 24, None, None
rsize = struct.unpack_from("<I", d, 12)[0]
for _ in range(struct.unpack_from("<I", d, 16)[0]):
    mid, n, b = struct.unpack_from("<IIQ", d, at)
    name = d[at + rsize:at + rsize + n].decode()
    at += rsize + n
    if os.path.samefile(name, sys.argv[2]):
        base, ident = b, mid
lo = min(int(l.split()[2], 16) for l in subprocess.run(["readelf", "-lW", sys.argv[2]],
         capture_output=True, text=True).stdout.splitlines() if l.split()[:1] == ["LOAD"])
print(base if base is not None else -1, lo, ident)
PY
  )
  ((base >= 0)) && ok "$exe: modules.bin names the executable (base $base)" \
    || bad "$exe: the executable is not in modules.bin"
  bias=$((base - first))
  read -r lo hi < <(sym "$B" vadd)
  lo=$((lo + bias)) hi=$((hi + bias))

  # Threads 1..T in vadd.
  for ((k = 1; k <= T; k++)); do
    norm "$exe.1/thread-$k.bin" $lo $hi --no-owner --contexts="$exe.1/contexts.bin" >v$k.txt
    python3 - v$k.txt >rel$k.txt 3>base$k.txt <<'PY'
import os, sys
first = {}
with os.fdopen(3, "w") as bases:
    for line in open(sys.argv[1]):
        f = line.split()
        if f[4] == "heap":
            key = (f[5], f[6])
            if key not in first:
                first[key] = int(f[8])
                bases.write(f"{int(f[8])}\n")
            f[8] = str(int(f[8]) - first[key])
        print(" ".join(f))
PY
  done
  lines=$(wc -l <v1.txt)
  ((lines == 3 * N + 1)) && ok "$exe: thread 1 makes 3N+1 accesses in vadd" \
    || bad "$exe: thread 1 makes $lines accesses in vadd, want $((3 * N + 1))"
  same=1
  for ((k = 2; k <= T; k++)); do cmp -s rel1.txt rel$k.txt || same=0; done
  ((same)) && ok "$exe: threads' vadd streams equal but for the slice base" \
    || bad "$exe: threads' vadd streams differ: $(diff rel1.txt rel2.txt | head -3)"
  for ((k = 1; k <= T; k++)); do
    want=$(printf '%s\n' $(((k - 1) * N * 8)) $(((k - 1) * N * 8)) $(((k - 1) * N * 8)))
    [[ $(cat base$k.txt) == "$want" ]] || bad "$exe: thread $k's slices start at $(cat base$k.txt | tr '\n' ' '), want $((k - 1))*N*8"
  done
  [[ $(cat base1.txt) != "$(cat base2.txt)" ]] && ok "$exe: slice bases k*N*8 apart" \
    || bad "$exe: threads 1 and 2 start their slices at the same offset"
  grep -c ' heap ' v1.txt | grep -qx $((3 * N)) && ok "$exe: vadd's 3N array accesses are heap" \
    || bad "$exe: $(grep -c ' heap ' v1.txt) heap accesses in vadd"
  failed=${#FAILURES[@]}
  for ((k = 1; k <= T; k++)); do
    norm "$exe.1/thread-$k.bin" $lo $hi | awk '$5 == "stack"' >s$k.txt
    read -r -a f <s$k.txt
    [[ $(wc -l <s$k.txt) == 1 && ${f[3]} == L && ${f[7]} == "$k" && ${f[8]} -lt 0 ]] \
      || bad "$exe: thread $k's stack access in vadd: $(cat s$k.txt)"
    [[ $(cut -d' ' -f9 s$k.txt) == $(cut -d' ' -f9 s1.txt) ]] \
      || bad "$exe: thread $k's ret at stack offset $(cut -d' ' -f9 s$k.txt), thread 1's at $(cut -d' ' -f9 s1.txt)"
  done
  ((${#FAILURES[@]} == failed)) && ok "$exe: ret loads from the thread's own stack, same offset in every thread"

  # done[k] in mark.
  read -r mlo mhi < <(sym "$B" mark)
  dlo=$(nm "$B" | awk '$3 == "done" { print $1 }')
  dlo=$((16#$dlo))
  failed=${#FAILURES[@]}
  for ((k = 1; k <= T; k++)); do
    got=$(norm "$exe.1/thread-$k.bin" $((mlo + bias)) $((mhi + bias)) | awk '$4 == "S"')
    want="static $mod 0 0 $((dlo + 8 * (k - 1) - first))"
    [[ $(cut -d' ' -f5- <<<"$got") == "$want" ]] \
      || bad "$exe: thread $k's store to done[$((k - 1))]: '$got', want '$want'"
  done
  ((${#FAILURES[@]} == failed)) && ok "$exe: done[k] normalised to the executable's module and link-time offset"

  # Two runs, environments of different sizes.
  failed=${#FAILURES[@]}
  for ((k = 0; k <= T; k++)); do
    norm "$exe.1/thread-$k.bin" --contexts="$exe.1/contexts.bin" >r1.$k
    norm "$exe.2/thread-$k.bin" --contexts="$exe.2/contexts.bin" >r2.$k
    cmp -s r1.$k r2.$k || bad "$exe: thread $k's normalised stream differs between runs: $(diff r1.$k r2.$k | head -3)"
  done
  [[ -s r1.0 ]] || bad "$exe: the main thread recorded nothing"
  python3 - "$exe.1/thread-0.bin" "$exe.2/thread-0.bin" <<'PY' || bad "$exe: raw stack addresses are the same in both runs: the test proves nothing"
import struct, sys
def stack(p):
    return [r[1] for r in struct.iter_unpack("<QQIHBBIIIIq", open(p, "rb").read()[24:]) if (r[5] >> 1) & 3 == 2]
a, b = stack(sys.argv[1]), stack(sys.argv[2])
sys.exit(not a or a == b)
PY
  ((${#FAILURES[@]} == failed)) && ok "$exe: two runs, same normalised streams in all $((T + 1)) threads"
done
finish
