#!/usr/bin/env bash
# `tracefold diagnose` with call-path samples (`record --sample 1ms`): the
# causes are the functions the designed problems put the work in
# (examples/diagnose/diag_problems.c: work_a, work_b), on the right rank,
# with the severities within 10 % of what the program built in; two
# imbalances that cancel in part are both named and said to be partially
# evened out; the function that holds the late run's blocking receive
# takes the derived label "wait for partner"; a sampler that lowered its
# rate during the run gives the same cause time.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"
needs_yielding_waits 4

designed imbalance 4 --sample 1ms &&
  expect load_imbalance --symptom MPI_Allreduce --cause work_a --cause-rank 3
if designed partial 4 --sample 1ms; then
  expect load_imbalance --symptom MPI_Allreduce --cause work_a --cause-rank 3 \
    --cause work_b --cause-rank 0 --detail "partially evened out"
fi
designed serial 4 --sample 1ms && expect serialisation --symptom MPI_Bcast --cause work_a --cause-rank 0
designed late 2 --sample 1ms &&
  expect wait_for_partner --symptom MPI_Recv --cause "rank 0" --cause work_a --cause-rank 0 \
    --derived "receive=wait for partner"
designed mpmd 4 --sample 1ms &&
  expect mpmd_imbalance --symptom MPI_Allreduce --cause work_a --cause work_b
# The sampler made to lower its rate (TRACEFOLD_TEST_SAMPLE_COST_NS, see
# sample_basic.sh; every tick set to cost 60 us, 6 % of 1 ms and 3 % of
# 2 ms, whatever the handler really costs on a loaded machine): samples 2
# ms apart each count for 2 ms, so the cause's time is still the designed
# imbalance, and the report says why.
if TRACEFOLD_TEST_SAMPLE_COST_NS==60000 TAG=slowed designed imbalance 4 --sample 1ms; then
  expect load_imbalance --symptom MPI_Allreduce --cause work_a --cause-rank 3 --cause-time
  CHECKS=$((CHECKS + 1))
  if grep -q "the sampler lowered its rate during the run on ranks 0.*3 .*from 1 ms to up to 2 ms" "$TEXT"; then
    ok "slowed sampler: the report says so"
  else
    bad "slowed sampler: no note in the report"; sed -n '1,/^Diagnoses/p' "$TEXT" >&2
  fi
fi
# 100 ms steps: see diagnose_problems.sh.
UNIT_MS=100 designed balanced 4 --sample 1ms && expect none
finish
