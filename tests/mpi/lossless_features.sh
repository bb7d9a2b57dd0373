#!/usr/bin/env bash
# Records programs built around particular MPI features -- sub-communicators
# (Comm_split, Cart_create/Cart_shift/Cart_sub), persistent requests
# (Send_init/Recv_init/Start/Startall/Request_free), nonblocking
# collectives with a Test polling loop, Waitany/Waitsome/Testall, Iprobe
# polling, Sendrecv_replace with a derived datatype, Alltoallv/Gatherv
# with rank-dependent counts, Scan, polling loops with wildcard receives and
# empty completions (polling), every kind of derived datatype (dtypes),
# intercommunicators (Intercomm_create,
# Sendrecv and Allreduce across, Intercomm_merge), process topologies with
# neighbourhood collectives (topo_nbr: Cart_create, Graph_create,
# Dist_graph_create_adjacent, whose arguments are recorded) -- and checks every trace expands to
# exactly the raw logs, with the communicators and request links intact.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless comms 6 20 '^comms: 6 ranks \(3x2, rows of 2, columns of 3\), 20 steps, checksum'
check_lossless comms 4 20 '^comms: 4 ranks \(2x2, rows of 2, columns of 2\), 20 steps, checksum'
if [[ -s $WORK/comms-np4/t.tf ]]; then
  # world + row split + column split + cart + two cart_sub: six ids, the
  # split/sub ones with one group line per row or column.
  ncomm=$(awk '/^comm /{print $2}' "$WORK/comms-np4/t.tf" | sort -u | wc -l)
  if [[ $ncomm -ne 6 ]]; then
    bad "comms at 4 ranks: expected 6 communicator ids in the trace, found $ncomm"
    grep '^comm' "$WORK/comms-np4/t.tf" >&2
  else
    ok "comms at 4 ranks: 6 communicator ids"
  fi
fi
check_lossless persistent 5 40 '^persistent: 5 ranks, 40 steps, checksum'
check_lossless persistent 2 20 '^persistent: 2 ranks, 20 steps, checksum'
check_lossless persistent_wild 4 10 '^persistent_wild: 4 ranks, 10 steps, checksum'
check_lossless nbc 4 30 '^nbc: 4 ranks, 30 steps, checksum'
check_lossless nbc 3 30 '^nbc: 3 ranks, 30 steps, checksum'
check_lossless misc_p2p 4 15 '^misc_p2p: 4 ranks, 15 steps, checksum'
check_lossless misc_p2p 3 15 '^misc_p2p: 3 ranks, 15 steps, checksum'
check_lossless intercomm 4 10 '^intercomm: 4 ranks, 10 steps, checksum'
check_lossless polling 4 6 '^polling: 4 ranks, 6 steps, checksum'
check_lossless dtypes 4 6 '^dtypes: 4 ranks, 6 steps, checksum'
check_lossless dtypes 3 4 '^dtypes: 3 ranks, 4 steps, checksum'
if [[ -s $WORK/intercomm-np4/t.tf ]]; then
  # The intercommunicator's Sendrecvs name the partner in the remote group.
  "$TF" expand "$WORK/intercomm-np4/t.tf" -r 3 >"$WORK/intercomm3.txt"
  n=$(grep -c '^MPI_Sendrecv .*peer=1 rpeer=1 ' "$WORK/intercomm3.txt" || true)
  [[ $n -eq 10 ]] || bad "intercomm: rank 3 (position 1 of the odd group) has $n Sendrecvs with peer 1, want 10"
  grep -q '^MPI_Intercomm_merge ' "$WORK/intercomm3.txt" || bad "intercomm: no MPI_Intercomm_merge in rank 3's events"
  # Both sides name the intercommunicator alike: the id that
  # MPI_Intercomm_create made is defined twice, once per group (evens,
  # odds), and the Allreduces on it use that one id on all ranks.
  t="$WORK/intercomm-np4/t.tf"
  id=$(awk '/^node [0-9]+ MPI_Intercomm_create /{p=1; next} /^node /{p=0} p && /^  field newcomm /{print $3}' "$t")
  if [[ -z $id ]] || ! grep -q "^comm $id members <1 0 2 2>$" "$t" || ! grep -q "^comm $id members <1 1 2 2>$" "$t"; then
    bad "intercomm: the intercommunicator '$id' is not one id with the even and the odd group: $(grep '^comm ' "$t" | tr '\n' ';')"
  fi
  # "@ *" is all ranks of the node; the nodes with that line (Sendrecvs and
  # Allreduces) are run by all ranks of the world ("ranks=*").
  grep -Eq "^  field comm $id\*10 @ \*$" "$t" &&
    [[ $(awk -v id="$id" '/^node /{r=$NF} $0 == "  field comm " id "*10 @ *" {print r}' "$t" | sort -u) == "ranks=*" ]] ||
    bad "intercomm: the Allreduces over the intercommunicator do not all use id $id"
fi
check_lossless topo_nbr 6 4 '^topo_nbr: 6 ranks, 4 steps, checksum'
if [[ -s $WORK/topo_nbr-np6/t.tf ]]; then
  # The topology's arguments as the program passed them: a 3x2 grid
  # periodic in x; the ring's index and edges, the same on every rank;
  # each rank's distributed-graph neighbours as offsets (left = 5, right = 1).
  "$TF" expand "$WORK/topo_nbr-np6/t.tf" -r 4 >"$WORK/topo4.txt"
  want_line() {
    grep -q -- "$2" "$WORK/topo4.txt" || { bad "topo_nbr rank 4: no $1 line matching '$2'"; grep "^$1 " "$WORK/topo4.txt" >&2; }
  }
  want_line MPI_Cart_create '^MPI_Cart_create .*dims=\[3,2\].*periods=\[1,0\]'
  want_line MPI_Graph_create '^MPI_Graph_create .*gedges=\[5,1,0,2,1,3,2,4,3,5,4,0\].*gindex=\[2,4,6,8,10,12\]'
  want_line MPI_Dist_graph_create_adjacent '^MPI_Dist_graph_create_adjacent .*gdsts=\[5,1\].*gsrcs=\[5,1\]'
  # Per-neighbour counts of the v/w forms: 1 + (rank + k) % 3 to grid
  # neighbour k; the graph's w form sends 4 and 8 bytes and receives 8 and 4.
  want_line MPI_Neighbor_alltoallv '^MPI_Neighbor_alltoallv .*counts=\[2,3,1,2\]'
  want_line MPI_Ineighbor_alltoallw '^MPI_Ineighbor_alltoallw .*counts=\[4,8\] rcounts=\[8,4\]'
fi
finish
