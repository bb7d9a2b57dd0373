#!/usr/bin/env bash
# The recorder's call-path cache (TRACEFOLD_PATH_CACHE, on by default) must
# give every MPI call the call site a full stack walk gives it.
#  - With TRACEFOLD_PATH_CACHE=check every cached answer is compared with a
#    walk; each rank reports its hits, walks and mismatches at MPI_Finalize.
#    Programs: call_paths (one helper reached from callers at equal stack
#    depth, through a changing function pointer, by recursion, from a second
#    thread), bt_like (one exchange from two solvers), pop (a halo helper
#    called from two loops), stencil_mpif (Fortran) and sweep3d. Every rank
#    must have used the cache (hits > 0) without a mismatch, and the trace
#    must equal the raw log. Walks must stay under a quarter of the hits
#    (each path is walked once, then found).
#  - call_paths traced with the cache on and off gives the same trace,
#    call sites included, and keeps its many paths apart.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

for spec in "call_paths 2 12" "bt_like 2 20" "pop 4 12" "stencil_mpif 4 10" "sweep3d 4 6"; do
  read -r name np steps <<<"$spec"
  CHECKS=$((CHECKS + 1))
  TRACEFOLD_PATH_CACHE=check record "$name" "$np" "$steps"
  what="$name at $np ranks (TRACEFOLD_PATH_CACHE=check)"
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
  if ! "$TF" diff "$DIR/raw" "$DIR/t.tf" > "$DIR/diff.txt" 2>&1; then
    bad "$what: trace differs from the raw log"
    show_run "$DIR/diff.txt"
  fi
done

CHECKS=$((CHECKS + 1))
for mode in on off; do
  TRACEFOLD_PATH_CACHE=$mode record call_paths 2 12
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "call_paths with the cache $mode: record exited $RC or wrote no trace"
    show_run "$DIR/err.txt"
  fi
  mv "$DIR" "$WORK/paths-$mode"
done
if [[ -s $WORK/paths-on/t.tf && -s $WORK/paths-off/t.tf ]]; then
  if ! "$TF" diff "$WORK/paths-off/t.tf" "$WORK/paths-on/t.tf" > "$WORK/paths.diff" 2>&1; then
    bad "call_paths: the trace with the cache differs from the one without"
    show_run "$WORK/paths.diff"
  fi
  # from_north, from_south, each also through the pointer, recursion 0..3 deep.
  sites=$(awk '$1 == "node" && $3 == "MPI_Sendrecv" { print $4 }' "$WORK/paths-off/t.tf" | sort -u | wc -l)
  if ((sites < 8)); then
    bad "call_paths: only $sites MPI_Sendrecv call sites (want 8: the paths are not apart)"
  else
    ok "call_paths: $sites MPI_Sendrecv call sites with and without the cache"
  fi
fi
finish
