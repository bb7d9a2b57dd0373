#!/usr/bin/env bash
# Completion calls must point at the requests they complete, and report
# what wildcard receives matched (tests/apps/request_links.c, 3 ranks):
#  - MPI_Waitall of the two Isends: links=[2,1] (the 2nd and 1st
#    request-making call back), even though Open MPI returns the same
#    handle for both when the sends complete inside MPI_Isend;
#  - MPI_Waitany completing an MPI_ANY_SOURCE receive: a src= field with
#    the source it matched, as MPI_Wait does.
# Checked on the raw logs (what the recorder saw) and on the trace.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless request_links 3 10 '^request_links: 3 ranks, 10 steps, checksum'
raw="$WORK/request_links-np3/raw"
for r in 0 1 2; do
  [[ -f $raw/rank-$r.txt ]] || continue
  wa=$(grep '^MPI_Waitall ' "$raw/rank-$r.txt" | grep -o 'links=\[[^]]*\]' | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')
  if [[ $wa != "10 links=[2,1] " ]]; then
    bad "rank $r: MPI_Waitall of the two Isends should have links=[2,1] in all 10 steps; got: $wa"
  fi
  nwa=$(grep -c '^MPI_Waitany ' "$raw/rank-$r.txt" || true)
  nsrc=$(grep '^MPI_Waitany ' "$raw/rank-$r.txt" | grep -c ' src=' || true)
  if [[ $nwa -ne 20 || $nsrc -ne 20 ]]; then
    bad "rank $r: $nsrc of $nwa MPI_Waitany events record the matched src of their MPI_ANY_SOURCE receive (want 20 of 20)"
  fi
done
[[ ${#FAILURES[@]} -gt 0 ]] && grep -E '^MPI_Wait(any|all) ' "$raw/rank-0.txt" | head -n 3 >&2
finish
