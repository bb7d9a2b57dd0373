#!/usr/bin/env bash
# The recorder's call-path cache (TRACEFOLD_PATH_CACHE, on by default) must
# give every MPI call the call site a full stack walk gives it.
#  - With TRACEFOLD_PATH_CACHE=check every cached answer is compared with a
#    walk; each rank reports its hits, walks and mismatches at MPI_Finalize.
#    Programs: call_paths (one helper reached from callers at equal stack
#    depth, along paths that differ only in the outermost signature frame,
#    through a changing function pointer, by recursion, through frames that
#    alloca moves (also one GCC realigns through another register), from a
#    coroutine and from a second thread), also under
#    `ulimit -s unlimited` (where glibc's idea of the main thread's stack
#    covers the heap, and so the coroutine's stack), bt_like (one exchange
#    from two solvers), pop (a halo helper called from two loops),
#    stencil_mpif (Fortran) and sweep3d. Every rank must have used the cache
#    (hits > 0) without a mismatch. Walks must stay under a quarter of the
#    hits (a path is walked twice, then found).
#  - Each program traced with the cache on and off gives the same trace,
#    call sites included; call_paths keeps its many paths apart.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

for spec in "call_paths 2 12" "call_paths 2 12 unlimited" "bt_like 2 20" "pop 4 12" \
  "stencil_mpif 4 10" "sweep3d 4 6"; do
  read -r name np steps stack <<<"$spec"
  CHECKS=$((CHECKS + 1))
  if [[ $stack == unlimited ]]; then
    (ulimit -s unlimited && TRACEFOLD_PATH_CACHE=check record "$name" "$np" "$steps"
     echo "$RC" > "$WORK/rc")
    RC=$(cat "$WORK/rc") DIR="$WORK/$name-np$np"
  else
    TRACEFOLD_PATH_CACHE=check record "$name" "$np" "$steps"
  fi
  what="$name at $np ranks (TRACEFOLD_PATH_CACHE=check${stack:+, ulimit -s $stack})"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what: record exited $RC or wrote no trace"
    show_run "$DIR/out.txt" "$DIR/err.txt"
    continue
  fi
  for ((r = 0; r < np; r++)); do
    line=$(grep -E "^tracefold: rank $r: call-path cache: " "$DIR/err.txt" || true)
    if [[ ! $line =~ :\ ([0-9]+)\ hits,\ ([0-9]+)\ walks,\ ([0-9]+)\ mismatches ]]; then
      bad "$what: rank $r did not report its call-path cache"
      show_run "$DIR/err.txt"
      continue
    fi
    hits=${BASH_REMATCH[1]} walks=${BASH_REMATCH[2]} mismatches=${BASH_REMATCH[3]}
    [[ $mismatches -eq 0 ]] || bad "$what: rank $r: $mismatches cached call paths differ from the stack walk"
    [[ $hits -gt 0 ]] || bad "$what: rank $r never used the cache ($walks walks)"
    # A path is walked once and then found: these programs repeat a few
    # paths every step, so walks stay far below hits unless entries evict
    # each other.
    if [[ $name != call_paths ]] && ((4 * walks >= hits)); then
      bad "$what: rank $r walked the stack $walks times for $hits hits (entries evicting each other?)"
    fi
    [[ $r -eq 0 ]] && ok "$what: rank 0: $hits hits, $walks walks, $mismatches mismatches"
  done
  if grep -q "call-path cache gave" "$DIR/err.txt"; then
    bad "$what: $(grep -m1 'call-path cache gave' "$DIR/err.txt")"
  fi
done

# With the cache on (the default) and off: the same events at the same call
# sites (the check mode above records the stack walk's answer).
for spec in "call_paths 2 12" "bt_like 2 20" "pop 4 12" "stencil_mpif 4 10" "sweep3d 4 6"; do
  read -r name np steps <<<"$spec"
  CHECKS=$((CHECKS + 1))
  for mode in on off; do
    TRACEFOLD_PATH_CACHE=$mode record "$name" "$np" "$steps"
    if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
      bad "$name with the cache $mode: record exited $RC or wrote no trace"
      show_run "$DIR/err.txt"
    fi
    rm -rf "$WORK/$name-$mode"
    mv "$DIR" "$WORK/$name-$mode"
  done
  [[ -s $WORK/$name-on/t.tf && -s $WORK/$name-off/t.tf ]] || continue
  if ! "$TF" diff "$WORK/$name-off/t.tf" "$WORK/$name-on/t.tf" > "$WORK/$name.diff" 2>&1; then
    bad "$name: the trace with the cache differs from the one without"
    show_run "$WORK/$name.diff"
  fi
done
off="$WORK/call_paths-off/t.tf"
if [[ -s $off ]]; then
  # from_north, from_south, each also through the pointer, recursion 0..3
  # deep, north_far and south_far; padded's two call sites, reaching
  # shifted and shifted_aligned.
  sites=$(awk '$1 == "node" && $3 == "MPI_Sendrecv" { print $4 }' "$off" | sort -u | wc -l)
  barriers=$(awk '$1 == "node" && $3 == "MPI_Barrier" { print $4 }' "$off" | sort -u | wc -l)
  if ((sites < 10 || barriers < 4)); then
    bad "call_paths: $sites MPI_Sendrecv and $barriers MPI_Barrier call sites (want 10 and 4: the paths are not apart)"
  else
    ok "call_paths: $sites MPI_Sendrecv and $barriers MPI_Barrier call sites with and without the cache"
  fi
fi
# More paths than a cache set has ways, all through one helper at one stack
# depth (mg_vcycle's halo exchange reached through different outer frames
# at every level): the set stops learning after a few rounds of evictions
# instead of learning (a walk with registers) on nearly every call.
CHECKS=$((CHECKS + 1))
limited "$WORK/mg.out" "$WORK/mg.err" env TRACEFOLD_PATH_CACHE=check "$TF" record -o "$WORK/mg.tf" -- \
  "${TRACEFOLD_MPIRUN:-mpirun}" -np 2 "$APPS/app_mg_vcycle" 100
attempts=$(sed -n 's/.*paths learned in \([0-9]*\) attempts.*/\1/p' "$WORK/mg.err" | sort -n | tail -1)
if [[ $LRC -ne 0 || -z $attempts ]]; then
  bad "mg_vcycle in check mode: exit $LRC, no learning count"
  show_run "$WORK/mg.err"
elif ((attempts > 2000)); then
  bad "mg_vcycle: $attempts walks with registers to learn paths in 100 cycles (thrashing; want <= 2000)"
else
  ok "mg_vcycle: $attempts walks with registers to learn paths in 100 cycles (29,204 calls per rank)"
fi
finish
