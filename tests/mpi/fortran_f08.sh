#!/usr/bin/env bash
# Programs that `use mpi_f08` are traced through the recorder's f08
# wrappers (tests/apps/halo_f08.F90, 4 ranks, 20 steps):
#  - the trace expands exactly to the raw logs;
#  - it has MPI_Init, MPI_Comm_split, MPI_Irecv, MPI_Isend, MPI_Waitall,
#    MPI_Sendrecv, MPI_Allreduce, MPI_Comm_free and MPI_Finalize nodes whose
#    call sites start in the program (the f08 call itself was caught);
#  - every rank's expanded events carry the peers, tags, counts and element
#    sizes the program used, and the sources its MPI_ANY_SOURCE receives
#    matched (read from the f08 statuses);
#  - stdout and exit status are the same with and without tracing.
# Registered only when the MPI has a usable mpi_f08 module; then a missing
# app_halo_f08 is a failure.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

if [[ ! -x $APPS/app_halo_f08 ]]; then
  bad "app_halo_f08 was not built although the MPI has mpi_f08"
  finish
fi

NP=4 STEPS=20
check_lossless halo_f08 $NP $STEPS "^halo_f08: $NP ranks, $STEPS steps, checksum"
t="$WORK/halo_f08-np$NP/t.tf"
if [[ -s $t ]]; then
  for op in MPI_Init MPI_Comm_split MPI_Irecv MPI_Isend MPI_Waitall MPI_Sendrecv MPI_Allreduce \
    MPI_Comm_free MPI_Finalize; do
    grep -Eq "^node [0-9]+ $op site=" "$t" || bad "halo_f08: the trace has no $op node"
  done
  foreign=$(grep -E '^site [0-9]+ ' "$t" | grep -v -E '^site [0-9]+ app_halo_f08\+0x' || true)
  [[ -z $foreign ]] || bad "halo_f08: call sites that do not start in app_halo_f08: $foreign"

  # expected R: rank R's events (site and timings left out), with counts.
  expected() {
    local r=$1
    local left=$(((r + NP - 1) % NP)) right=$(((r + 1) % NP))
    # Split by parity with key NP - rank: the higher world rank comes first,
    # so the partner in the 2-rank communicator is half-rank 0 if higher.
    local partner=$(((r + 2) % NP)) hpeer=1
    ((partner > r)) && hpeer=0
    {
      echo "1 MPI_Init"
      echo "1 MPI_Comm_split comm=0 newcomm=C color=$((r % 2)) key=$((NP - r))"
      echo "$STEPS MPI_Irecv peer=any tag=1 count=2 dtype=D dsize=8 comm=0"
      echo "$STEPS MPI_Irecv peer=$right tag=2 count=2 dtype=D dsize=8 comm=0"
      echo "$STEPS MPI_Isend peer=$right tag=1 count=2 dtype=D dsize=8 comm=0"
      echo "$STEPS MPI_Isend peer=$left tag=2 count=2 dtype=D dsize=8 comm=0"
      echo "$STEPS MPI_Waitall srcs=[$left] mtags=[1] links=[4,3,2,1]"
      echo "$STEPS MPI_Sendrecv peer=$hpeer src=$hpeer rpeer=any tag=7 count=1 dtype=D dsize=4 rcount=1 rdtype=D rdsize=4 comm=C rtag=7"
      echo "$((STEPS / 5 + 1)) MPI_Allreduce count=1 dtype=D dsize=8 comm=0 redop=3"
      echo "1 MPI_Comm_free comm=C"
      echo "1 MPI_Finalize"
    } | sort
  }
  # Datatype and communicator ids are the recorder's own numbering: only
  # their being consistent matters here.
  for ((r = 0; r < NP; r++)); do
    CHECKS=$((CHECKS + 1))
    if ! "$TF" expand -r $r "$t" >"$WORK/rank$r.txt" 2>"$WORK/expand-err.txt"; then
      bad "halo_f08: tracefold expand -r $r failed"
      show_run "$WORK/expand-err.txt"
      continue
    fi
    got=$(grep -E '^MPI_' "$WORK/rank$r.txt" |
      sed -E 's/ site=[0-9]+//; s/ (compute|comm)_ns=[0-9]+//g; s/(dtype|rdtype)=[0-9]+/\1=D/g;
              s/(comm|newcomm)=[1-9][0-9]*/\1=C/g' |
      sort | uniq -c | sed -E 's/^ *//' | sort)
    if [[ $got != "$(expected $r)" ]]; then
      bad "halo_f08: rank $r events differ from the program's calls"
      diff <(expected $r) <(echo "$got") >&2 || true
    else
      ok "halo_f08: rank $r events match the program's calls"
    fi
  done
fi

# Same output and exit status without tracing.
CHECKS=$((CHECKS + 1))
plain halo_f08 $NP $STEPS
if [[ $PRC -ne ${RC:-x} ]]; then
  bad "halo_f08: exit status $PRC without tracing, ${RC:-none} with"
elif ! cmp -s "$PDIR/plain.txt" "$WORK/halo_f08-np$NP/out.txt"; then
  bad "halo_f08: stdout differs with tracing"
  diff "$PDIR/plain.txt" "$WORK/halo_f08-np$NP/out.txt" >&2 || true
else
  ok "halo_f08: same output and exit status ($PRC) with and without tracing"
fi
finish
