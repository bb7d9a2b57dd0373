#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE: thread 1 of each rank posts MPI_Irecv and MPI_Isend,
# thread 0 completes them (MPI_Waitall, MPI_Wait). The completions' links
# name requests of another thread: they count back in that thread's request
# events, and `lthreads` says which thread (docs/format.md). The trace is
# lossless per thread against the raw log and no link is undefined.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$MPIRUN" -np 2 "$APPS/app_thread_requests" 6 > plain.txt
"$TF" record -o t.tf --raw-log raw -- "$MPIRUN" -np 2 "$APPS/app_thread_requests" 6 > traced.txt 2> err.txt
cmp plain.txt traced.txt
if grep -q "not provided" plain.txt; then
  echo "this MPI does not provide MPI_THREAD_MULTIPLE: only the unchanged output was checked"
  exit 77
fi
if grep -q "tracing is off" err.txt; then cat err.txt >&2; exit 1; fi
"$TF" diff raw t.tf | tee diff.txt
grep -qx "same: 2 ranks x 2 threads" diff.txt || fail "expected 2 ranks x 2 threads"
for r in 0 1; do
  "$TF" expand t.tf -r $r -t 0 > e0.txt
  "$TF" expand t.tf -r $r -t 1 > e1.txt
  grep -q "^MPI_I[sr]" e0.txt && fail "rank $r: thread 0 made requests"
  [[ $(grep -c "^MPI_Isend " e1.txt) -eq 6 ]] || fail "rank $r: thread 1 has not 6 Isends"
  grep "^MPI_Wait" e0.txt > waits.txt
  grep -q "undef" waits.txt && { cat waits.txt >&2; fail "rank $r: an undefined link"; }
  # Each step's Irecv and Isend are thread 1's two latest request events.
  [[ $(grep -c "^MPI_Waitall .*links=\[2,1\] lthreads=\[1,1\]" waits.txt) -eq 3 ]] ||
    { cat waits.txt >&2; fail "rank $r: Waitall links"; }
  [[ $(grep -c "^MPI_Wait .*links=\[2\] lthreads=\[1\]" waits.txt) -eq 3 ]] ||
    { cat waits.txt >&2; fail "rank $r: Wait links (the Irecv)"; }
  [[ $(grep -c "^MPI_Wait .*links=\[1\] lthreads=\[1\]" waits.txt) -eq 3 ]] ||
    { cat waits.txt >&2; fail "rank $r: Wait links (the Isend)"; }
done
# A third thread completes them and calls MPI before the poster: the
# threads are renumbered at MPI_Finalize (docs/format.md), and the links'
# `lthreads` with them, in the trace and in the raw log's reading.
"$TF" record -o t3.tf --raw-log raw3 -- "$MPIRUN" -np 2 "$APPS/app_thread_requests" 4 third \
  > /dev/null 2> err3.txt
"$TF" diff raw3 t3.tf | tee diff3.txt
grep -qx "same: 2 ranks x 3 threads" diff3.txt || fail "third: expected 2 ranks x 3 threads"
for r in 0 1; do
  poster=0
  for t in 1 2; do "$TF" expand t3.tf -r $r -t $t | grep -q "^MPI_Isend " && poster=$t; done
  [[ $poster -ne 0 ]] || fail "rank $r: no thread made the requests"
  "$TF" expand t3.tf -r $r -t $((3 - poster)) | grep "^MPI_Wait" > waits3.txt
  [[ $(grep -c " lthreads=\[$poster[],]" waits3.txt) -eq 6 ]] ||
    { cat waits3.txt >&2; fail "rank $r: lthreads do not name thread $poster"; }
done
