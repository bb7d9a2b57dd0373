#!/usr/bin/env bash
# Cost of `tracefold patterns` (issue 32, "Benchmarks"): wall time and peak
# memory (/usr/bin/time -v, maximum resident set) on traces of 1,024 and
# 16,384 ranks, and events per second of the expanded trace (every event of
# every rank: the calls `tracefold stats` counts), so that the seed's ~79 k
# messages/s compares.
#   - Regular codes, extrapolated (`tracefold extrapolate`, as
#     scripts/bench-extrap.sh does it) from runs recorded here: the 2-D
#     stencils (periodic and not) at 4, 9, 16, 25 ranks, the 3-D stencil at
#     8, 12, 18, 27, sweep3d and mg_vcycle at 4, 9, 16, 25, halo26 at 27,
#     36, 48, 64 (its edge, face and corner ranks need 3 along each axis
#     in two inputs, and the axes sizes varied). The extrapolated trace
#     keeps the module names of the call sites but not their symbols, so
#     `tracefold symbolize --debug-dir` names them again from the programs:
#     without function names every call site is a context of its own.
#   - An irregular neighbourhood, amg_like-style, that extrapolation cannot
#     make (its neighbour sets follow a hash of the rank pair, so no grid
#     holds one group per cell) and 1,024 processes cannot be recorded on
#     this machine: raw logs written by the script below (each rank with
#     its ring neighbours and the ranks a hash links it to, both ways,
#     Isend to each, a blocking Recv from each, Waitall, then an
#     Allreduce, STEPS times), folded by `tracefold fold`.
# Settings (environment): BUILD_DIR=build, STEPS=12, TARGETS="1024 16384",
# IRREGULAR="1024" (rank counts of the irregular case; "" skips it),
# KEEP_DIR=DIR (write the traces there and keep them).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-12}"
TARGETS="${TARGETS-1024 16384}"
IRREGULAR="${IRREGULAR-1024}"
BUILD_DIR=$(realpath "$BUILD_DIR")
TF="$BUILD_DIR/src/cli/tracefold"
APPS="$BUILD_DIR/tests/apps"
[[ -x $TF ]] || { echo "bench-patterns: build first ($TF)" >&2; exit 2; }
if [[ -n ${KEEP_DIR:-} ]]; then
  mkdir -p "$KEEP_DIR"; out=$(cd "$KEEP_DIR" && pwd)
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
cd "$out"

rec() {  # rec NAME APP NP
  [[ -s $1-$3.tf ]] && return 0
  timeout 600 "$TF" record -o "$1-$3.tf" -- mpirun -np "$3" "$APPS/app_$2" "$STEPS" \
    > "rec-$1-$3.log" 2>&1 || { echo "record $1 at $3 ranks failed" >&2; tail "rec-$1-$3.log" >&2; exit 1; }
}

# Events of every rank: the calls of all of `stats`' rows (the sixth field
# from the end; call sites hold blanks).
events_of() {
  "$TF" stats "$1" 2> /dev/null | awk 'NR > 2 && $(NF - 5) ~ /^[0-9]+$/ {s += $(NF - 5)} END {print s + 0}'
}

row() {  # row NAME N TRACE
  local name=$1 n=$2 f=$3
  [[ -s $f ]] || { printf '| %-22s | %6d | (no trace) | | | | |\n' "$name" "$n"; return 0; }
  if ! /usr/bin/time -v "$TF" patterns "$f" > "p-$name-$n.txt" 2> "p-$name-$n.time"; then
    echo "patterns $name at $n failed:" >&2; tail -3 "p-$name-$n.time" >&2; return 0
  fi
  local wall rss ev secs shape
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "p-$name-$n.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "p-$name-$n.time")
  secs=$(awk -v w="$wall" 'BEGIN {n = split(w, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s}')
  ev=$(events_of "$f")
  # The shape of the global pattern with the most messages.
  shape=$(awk '/^  G[0-9]+: / {for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^messages/) m = $i + 0}
    /^    shape: / && m > best {best = m; sub(/^    shape: /, ""); sub(/,.*/, ""); s = $0}
    END {print s}' "p-$name-$n.txt")
  printf '| %-22s | %6d | %8s | %8.1f | %10s | %10s | %-22s |\n' "$name" "$n" "$wall" \
    "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" "$ev" \
    "$(awk -v e="$ev" -v s="$secs" 'BEGIN {if (s > 0) printf "%.0f", e / s; else print "-"}')" "$shape"
}

xrow() {  # xrow NAME N INPUTS...: extrapolate (once), symbolize, then row
  local name=$1 n=$2 f="x-$1-$2.tf"
  shift 2
  if [[ ! -s $f ]] &&
    ! timeout 1200 "$TF" extrapolate "$@" --ranks "$n" -o "$f" > "x-$name-$n.log" 2>&1; then
    echo "extrapolate $name to $n failed: $(tail -n 2 "x-$name-$n.log")" >&2
    rm -f "$f"
  fi
  if [[ -s $f ]] && ! "$TF" symbolize --debug-dir "$APPS" "$f" > /dev/null 2>&1; then
    echo "symbolize of $name at $n failed" >&2
  fi
  row "$name" "$n" "$f"
}

# irregular N: raw logs of an amg_like-style neighbourhood on N ranks, folded.
irregular() {
  local n=$1 dir="irr-$1"
  [[ -s irr-$n.tf ]] && return 0
  rm -rf "$dir"; mkdir -p "$dir"
  python3 - "$n" "$STEPS" "$dir" << 'EOF'
import sys
n, steps, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def mix(a, b):
    h = (a * 2654435761 ^ (b + 0x9e3779b9)) & 0xffffffff
    h ^= h >> 15; h = (h * 2246822519) & 0xffffffff; h ^= h >> 13
    return h
# Ring neighbours, and about 4 more per rank within 64 ranks: an unstructured
# mesh's partition, symmetric by construction.
nbrs = [set() for _ in range(n)]
for a in range(n):
    nbrs[a].update({(a + 1) % n, (a - 1) % n})
    for b in range(a + 2, min(n, a + 64)):
        if mix(a, b) % 31 == 0:
            nbrs[a].add(b); nbrs[b].add(a)
for r in range(n):
    with open(f"{d}/rank-{r}.txt", "w") as f:
        f.write(f"rank {r} size {n}\nsite 1 amg+0x100\nsite 2 amg+0x200 amg+0x900\n")
        f.write("site 3 amg+0x300 amg+0x900\nsite 4 amg+0x400 amg+0x900\nsite 5 amg+0x500\n")
        f.write("MPI_Init site=1\n")
        ns = sorted(nbrs[r])
        for _ in range(steps):
            for p in ns:
                f.write(f"MPI_Isend site=2 peer={p} tag=7 count={4 + mix(r, p) % 29} dsize=8\n")
            for p in ns:
                f.write(f"MPI_Recv site=2 peer={p} tag=7 count={4 + mix(p, r) % 29} dsize=8\n")
            f.write(f"MPI_Waitall site=3 req={len(ns)}\n")
            f.write("MPI_Allreduce site=4 count=1 dsize=8 redop=1\n")
        f.write("MPI_Finalize site=5\n")
EOF
  "$TF" fold "$dir" -o "irr-$n.tf" > "fold-irr-$n.log" 2>&1 ||
    { echo "fold of the irregular $n-rank logs failed: $(tail -n 2 "fold-irr-$n.log")" >&2; return 0; }
  rm -rf "$dir"
}

for n in 4 9 16 25; do
  rec periodic stencil2d_periodic $n; rec nonperiodic stencil2d_nonperiodic $n
  rec sweep3d sweep3d $n; rec mg_vcycle mg_vcycle $n
done
for n in 8 12 18 27; do rec stencil3d stencil3d $n; done
for n in 27 36 48 64; do rec halo26 halo26 $n; done

echo "tracefold patterns, $STEPS steps, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| trace                  |  ranks | wall     | peak MiB |     events |   events/s | shape of the largest    |"
echo "|------------------------|--------|----------|----------|------------|------------|------------------------|"
for n in $TARGETS; do
  xrow "stencil2d periodic" "$n" periodic-4.tf periodic-9.tf periodic-16.tf periodic-25.tf
  xrow "stencil2d nonperiodic" "$n" nonperiodic-4.tf nonperiodic-9.tf nonperiodic-16.tf nonperiodic-25.tf
  xrow "stencil3d" "$n" stencil3d-8.tf stencil3d-12.tf stencil3d-18.tf stencil3d-27.tf
  xrow "halo26" "$n" halo26-27.tf halo26-36.tf halo26-48.tf halo26-64.tf
  xrow "sweep3d" "$n" sweep3d-4.tf sweep3d-9.tf sweep3d-16.tf sweep3d-25.tf
  xrow "mg_vcycle" "$n" mg_vcycle-4.tf mg_vcycle-9.tf mg_vcycle-16.tf mg_vcycle-25.tf
done
for n in $IRREGULAR; do
  irregular "$n"
  row "irregular (amg-style)" "$n" "irr-$n.tf"
done
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
