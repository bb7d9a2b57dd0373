#!/usr/bin/env bash
# Fortran programs are traced through the recorder's Fortran wrappers:
#  - app_stencil_mpif (include 'mpif.h'): MPI_Irecv + MPI_Send halo,
#    MPI_Waitall, MPI_Allreduce;
#  - app_collectives_usempi (use mpi): MPI_Bcast, MPI_Alltoall,
#    MPI_Allreduce, MPI_Reduce, MPI_Barrier;
#  - app_graph_usempi (use mpi): a ring built with
#    MPI_Dist_graph_create_adjacent (MPI_UNWEIGHTED), MPI_Neighbor_allgather
#    on it, MPI_Comm_free and MPI_Pcontrol (no IERROR argument);
#  - app_dtypes_usempi (use mpi): MPI_Type_vector, MPI_Type_create_struct
#    (an array of Fortran handles), MPI_Type_create_resized, MPI_Type_dup,
#    the decoders, MPI_Type_free, MPI_Waitsome (indices) and MPI_Waitall
#    with a count of 0.
# Each trace must have those nodes, with call sites in the program itself
# (the Fortran call was caught, not only the C call underneath), Waitall
# links that point back to the Irecvs, and expand exactly to the raw logs.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

if [[ ! -x $APPS/app_stencil_mpif || ! -x $APPS/app_collectives_usempi || ! -x $APPS/app_graph_usempi ||
  ! -x $APPS/app_dtypes_usempi ]]; then
  bad "Fortran test programs were not built (no MPI Fortran support?)"
  finish
fi

# has_nodes NAME NP OP... : the trace of NAME at NP ranks has a node of
# every OP, and all call sites start in the program's own module.
has_nodes() {
  local name=$1 np=$2
  shift 2
  local t="$WORK/$name-np$np/t.tf" op
  [[ -s $t ]] || return 0
  for op in "$@"; do
    grep -Eq "^node [0-9]+ $op site=" "$t" || bad "$name: the trace has no $op node"
  done
  local foreign
  foreign=$(grep -E '^site [0-9]+ ' "$t" | grep -v -E "^site [0-9]+ app_$name\+0x" || true)
  [[ -z $foreign ]] || bad "$name: call sites that do not start in app_$name: $foreign"
  ok "$name at $np ranks: nodes $(awk '/^node /{print $3}' "$t" | sort -u | tr '\n' ' ')"
}

check_lossless stencil_mpif 4 40 '^ *stencil_mpif: 4 ranks, 40 steps, checksum'
has_nodes stencil_mpif 4 MPI_Init MPI_Irecv MPI_Send MPI_Waitall MPI_Allreduce MPI_Finalize
t="$WORK/stencil_mpif-np4/t.tf"
if [[ -s $t ]]; then
  # 4 Irecvs, 4 Sends, then Waitall of the 4 receive requests: every step
  # the same list of 4 links back to the Irecvs, on every rank ("@ *": all
  # ranks of the node, which are all ranks of the world, "ranks=*"). The
  # four newest requests in order are stored as the derived list -4.
  grep -Eq '^  field list links (\(4( [1-9][0-9]*){4}\)|-4)\*40 @ \*$' "$t" &&
    [[ $(awk '/^node /{r=$NF} /^  field list links (\(4 .*\)|-4)\*40 @ \*$/{print r}' "$t" | sort -u) == "ranks=*" ]] ||
    bad "stencil_mpif: Waitall links are not one list of 4 repeated 40 times on all ranks: $(grep 'field list links' "$t")"
  # A Fortran DOUBLE PRECISION element is 8 bytes.
  grep -Eq '^  field dsize 8\*' "$t" || bad "stencil_mpif: no dsize 8 for DOUBLE PRECISION"
fi
check_lossless stencil_mpif 6 30 '^ *stencil_mpif: 6 ranks, 30 steps, checksum'

check_lossless collectives_usempi 4 20 '^ *collectives_usempi: 4 ranks, 20 steps, checksum'
has_nodes collectives_usempi 4 MPI_Init MPI_Bcast MPI_Alltoall MPI_Allreduce MPI_Reduce MPI_Barrier MPI_Finalize
t="$WORK/collectives_usempi-np4/t.tf"
if [[ -s $t ]]; then
  # The Bcast root rotates with the step: root = mod(s, 4), s = 1..20, on
  # all ranks.
  grep -Eq '^  field root \(1 2 3 0\)\*5 @ \*$' "$t" &&
    [[ $(awk '/^node /{r=$NF} /^  field root \(1 2 3 0\)\*5 @ \*$/{print r}' "$t" | sort -u) == "ranks=*" ]] ||
    bad "collectives_usempi: Bcast roots are not (1 2 3 0)*5: $(grep 'field root' "$t" | head -n 2)"
fi
check_lossless collectives_usempi 3 20 '^ *collectives_usempi: 3 ranks, 20 steps, checksum'

check_lossless graph_usempi 4 10 '^ *graph_usempi: 4 ranks, 10 steps, checksum'
has_nodes graph_usempi 4 MPI_Init MPI_Dist_graph_create_adjacent MPI_Pcontrol MPI_Neighbor_allgather \
  MPI_Comm_free MPI_Allreduce MPI_Finalize
t="$WORK/graph_usempi-np4/t.tf"
if [[ -s $t ]]; then
  # The graph communicator is registered with all 4 world ranks (besides
  # MPI_COMM_WORLD; a group of all ranks is written "*"), and both
  # MPI_Pcontrol levels came through the Fortran INTEGER: 1 at the first
  # call site, 0 at the second.
  [[ $(grep -Ec '^comm [1-9][0-9]* members \*$' "$t") -eq 1 ]] ||
    bad "graph_usempi: the distributed graph communicator is not registered with all 4 ranks: $(grep '^comm ' "$t")"
  levels=$(awk '/^node [0-9]+ MPI_Pcontrol /{p=1; next} /^node /{p=0} p && /^  field level /{print $3}' "$t" | tr '\n' ' ')
  [[ $levels == "1 0 " ]] || bad "graph_usempi: MPI_Pcontrol levels are '$levels', expected '1 0 '"
fi

# The Fortran output is the same with and without tracing.
plain collectives_usempi 3 20
cmp -s "$PDIR/plain.txt" "$WORK/collectives_usempi-np3/out.txt" ||
  bad "collectives_usempi: stdout differs with tracing"
check_lossless dtypes_usempi 3 4 '^ *dtypes_usempi: 3 ranks, 4 steps, checksum'
has_nodes dtypes_usempi 3 MPI_Type_vector MPI_Type_create_struct MPI_Type_create_resized MPI_Type_dup \
  MPI_Type_get_contents MPI_Type_free MPI_Waitsome MPI_Waitall
raw="$WORK/dtypes_usempi-np3/raw"
if [[ -s $raw/rank-2.txt ]]; then
  # MPI_INTEGER is 30 and MPI_DOUBLE_PRECISION 32: the struct's whole array
  # of types, converted from Fortran handles.
  grep -Eq '^MPI_Type_create_struct .*blocklens=\[1,2\] dsizes=\[4,8\] dtypes=\[30,32\] newsize=20 newtype=1001 ' "$raw/rank-2.txt" ||
    bad "dtypes_usempi: MPI_Type_create_struct without its types: $(grep -m1 '^MPI_Type_create_struct' "$raw/rank-2.txt")"
  # Fortran indices are 1-based; recorded 0-based.
  if grep '^MPI_Waitsome ' "$raw/rank-2.txt" | grep -Eqv 'indices=\[[01](,[01])?\]'; then
    bad "dtypes_usempi: Waitsome indices not 0-based: $(grep -m1 '^MPI_Waitsome' "$raw/rank-2.txt")"
  fi
  n=$(grep -c '^MPI_Waitall .*links=\[\]' "$raw/rank-2.txt" || true)
  [[ $n -eq 4 ]] || bad "dtypes_usempi: rank 2 has $n MPI_Waitall with links=[], want 4"
fi
finish
