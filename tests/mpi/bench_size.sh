#!/usr/bin/env bash
# The benchmark of an irregular code follows the trace's size (issue 35,
# part 3; docs/bench.md "Size of the program"): for amg_like (polling
# V-cycle, ranks on different levels) and exchange_setup (per-rank,
# per-round contact sets, each rank folding its poll loop its own way),
# recorded in the compact form, the C file `tracefold bench` writes is at
# most 20 times the trace's bytes (the bound), and so is it for
# persistent and poll_exact. Each benchmark also compiles with
# -Werror, runs, and re-traces equal (bench_lib.bash). Compile time is not
# asserted here (a loaded machine): scripts/bench-bench-size.sh measures it.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"

# size_one NAME NP STEPS BOUND DIFF-OPTIONS...
size_one() {
  local name=$1 np=$2 steps=$3 BOUND=$4
  shift 4
  local what="$name at $np ranks, $steps steps" d=$WORK/$name-$np-$steps
  CHECKS=$((CHECKS + 1))
  mkdir -p "$d"
  limited "$d/out.txt" "$d/err.txt" "$TF" record -o "$d/t.tf" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$APPS/app_$name" "$steps"
  if [[ $LRC -ne 0 || ! -s $d/t.tf ]]; then
    bad "$what: recording failed ($LRC)"
    show_run "$d/err.txt"
    return 0
  fi
  BENCH_GEN=()
  bench_generate_run_diff "$what" "$d" "$np" "$SECONDS" "$@"
  [[ -s $d/bench.c ]] || return 0
  local tb cb
  tb=$(stat -c %s "$d/t.tf")
  cb=$(stat -c %s "$d/bench.c")
  if ((cb > BOUND * tb)); then
    bad "$what: the benchmark is $cb bytes, more than $BOUND times the trace's $tb"
  else
    ok "$what: benchmark $cb bytes, trace $tb bytes ($((cb * 100 / tb / 100)).$(printf '%02d' $((cb * 100 / tb % 100)))x)"
  fi
}

size_one amg_like 4 3 20 --ignore-polls --resolved
# exchange_setup's recordings differ from run to run (poll counts, arrival
# order), and so do both sizes; the generator's compact forms (no counter a
# table does not read, trip counts read and stepped in one expression,
# cyclic list tables) keep it under the bound with a margin
# (docs/benchmarks.md).
size_one exchange_setup 4 6 20 --ignore-polls --resolved
size_one exchange_setup 8 10 20 --ignore-polls --resolved
# persistent (request rows started and completed again and again) and
# poll_exact (every poll a call of the trace), recorded as the benchmark
# tests list them (bench_lib.bash).
size_one persistent 4 10 20
size_one poll_exact 2 5 20 --ignore-polls --resolved
finish
