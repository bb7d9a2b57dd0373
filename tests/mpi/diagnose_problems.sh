#!/usr/bin/env bash
# `tracefold diagnose` on programs with designed problems
# (examples/diagnose/diag_problems.c), recorded with --timeline (no samples: the
# causes are the MPI call paths the computation ends at). Each diagnosis's
# severity is within 10 % of what the program measured it built in, and
# names the right call and rank; the balanced control has no diagnosis and
# a few long collectives are not frequent communication.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"

designed imbalance 4 &&
  expect load_imbalance --symptom MPI_Allreduce --cause MPI_Allreduce --cause-rank 3
designed serial 4 && expect serialisation --symptom MPI_Bcast --cause MPI_Bcast --cause-rank 0
designed frequent 4 && expect frequent_communication --symptom MPI_Allreduce
designed few 4 && expect absent frequent_communication
designed late 2 && expect wait_for_partner --symptom MPI_Recv --cause "rank 0" --cause-rank 0
designed large 2 && expect large_transfer --symptom MPI_Send
designed mpmd 4 && expect mpmd_imbalance --symptom MPI_Allreduce --detail "ranks 0,1 | ranks 2,3"
designed balanced 4 && expect none
finish
