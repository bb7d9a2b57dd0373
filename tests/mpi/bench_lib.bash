# Helpers of tests/mpi/bench_programs*.sh (not a test itself): sourced after
# tests/apps/mpi_test_lib.bash.
#   bench_one NAME NP STEPS [DIFF OPTIONS]  record, generate, compile with
#       mpicc -std=c11 -Wall -Wextra -Werror, record the benchmark, diff
#   refused_one NAME NP STEPS  record; generation must fail naming a node
#       and leave no file
# Every MPI test program of the project is in exactly one list; the four
# bench_programs*.sh scripts each run one part (CTest gives each script its
# own time limit). Entries: name ranks steps [diff options].
#   diff options: programs whose outcome-dependent fields cannot be
#   reproduced as recorded: wildcard receives (the benchmark names the
#   source each matched: --resolved) and polls (--ignore-polls).
#   --gen=OPTION is passed to `tracefold bench`: --keep-wildcards for
#   persistent_wild (one persistent wildcard receive matched two sources:
#   one MPI_Recv_init cannot name both), request_links and misc_p2p (two wildcard
#   receives completed by MPI_Waitany: with wildcards the first posted one
#   always completes first; with named sources the index depends on which
#   neighbour's message arrives first, seen 0 vs 1), compared with
#   --ignore-matched. With diff --ignore-outcomes both
#   traces are compared without the fields that say which requests a
#   completion found complete, `index`, `indices`, `outcount`, and without
#   the request `links` of every call, which name a request that an earlier
#   call completed as null: MPI_Waitany/Waitsome return what has arrived,
#   which depends on timing, and a poll that completed a request in one run
#   and not in the other changes the links of the calls after it (seen:
#   sim_mix [2,1] vs [2,null] after an MPI_Test, polling's MPI_Waitany
#   index 3 vs 2, dtypes_usempi's and wild_statuses' MPI_Waitsome [0] vs
#   [0,1] and [0] vs [0,1,3,6]). Everything else of every call is
#   compared. polling and wild_statuses also keep their wildcards: diff
#   --resolved reads a wildcard's match from the completion's index and
#   links, and wild_statuses cancels a wildcard receive, which matched
#   nothing (--resolved keeps it `any`, the benchmark names the rank itself).
BENCH_KERNELS=(
  "ring 4 10"
  "stencil2d_periodic 4 10"
  "stencil2d_nonperiodic 4 10"
  "stencil3d 8 4"
  "stencil_cxx 4 10"
  "halo26 8 3"
  "halo26_periodic 8 3"
  "sweep3d 4 3"
  "sweep_fn 6 2"
  "cg 4 4"
  "ft 4 4"
  "lu 4 4 --resolved"
  "pop 4 5"
  "master_worker 4 10 --resolved"
  "bt_like 4 3"
  "mg_vcycle 4 3"
  "amg_like 4 3 --ignore-polls --resolved"
  "exchange_setup 4 6 --ignore-polls --resolved"
  "ssor_wave 8 3"
  "adi_mp 9 3"
  "fft3d 8 3"
  "isort 4 3"
  "mg3d 8 2"
  "sqrt_ring 4 3"
  "pipeline 4 3"
  "ring_allreduce 4 3"
)
BENCH_FEATURES=(
  "comms 4 5"
  "comms 6 5"
  "persistent 4 10"
  "persistent_wild 4 5 --gen=--keep-wildcards --ignore-matched"
  "nbc 4 5 --ignore-polls"
  "intercomm 4 5"
  "comm_null 4 5"
  "request_links 3 5 --gen=--keep-wildcards --ignore-polls --ignore-matched"
  "sim_compute 4 5"
  "sim_mix 4 3 --ignore-polls --ignore-outcomes"
  "polling 4 3 --gen=--keep-wildcards --ignore-polls --ignore-matched --ignore-outcomes"
  "poll_exact 2 5 --ignore-polls --resolved"
  "wild_statuses 4 3 --gen=--keep-wildcards --ignore-polls --ignore-matched --ignore-outcomes"
  "coll_sites 4 3"
  "waits_inject 2 3"
  "producer_consumer 2 3"
  "bcast_first 4 3"
  "misc_p2p 4 5 --gen=--keep-wildcards --ignore-polls --ignore-matched"
  "dtypes 4 3"
  "dtype_reuse 2 4"
  "topo_nbr 6 3"
  "nbr_halo 6 3"
  "ring_minor 4 5"
  "grid_comms 6 3"
  "strong2d 6 3"
  "comm_self 4 5"
  "comm_self 2 3"
  "patterns_faults 6 3"
  "omp_stencil 4 5 --gen=--single-thread"
)
BENCH_OTHERS=(
  "diag_problems 4 3"
  "sym_c 4 3"
  "sym_cxx 4 3"
  "stencil_mpif 4 10"
  "collectives_usempi 4 5"
  "sym_f 4 3"
  "halo_f08 4 10 --resolved"
  "wild_statuses_f 3 3 --resolved"
  "dtypes_usempi 3 3 --ignore-outcomes"
  "graph_usempi 4 5"
)
# Traces the generator refuses: the refusal must name a node and write no
# file. --drop-field F removes field F from the recorded (text) trace first,
# as a recorder older than that field wrote it: a graph without its edges.
# call_paths's two threads make collective calls on one communicator, in
# an order across threads the trace does not record.
# thread_tags has two threads send with one tag, in an order the generator
# does not keep.
BENCH_REFUSED=(
  "topo_nbr 4 3 --drop-field gedges"
  "call_paths 4 5"
  "thread_tags 2 5"
)
# Programs with several threads calling MPI: bench_threads.sh runs the
# first three, bench_thread_wild.sh thread_wild (a wildcard receive on a
# thread other than the first).
BENCH_THREADS="threads thread_requests omp_halo thread_wild"
# Programs not run: abort, crash and outdir_gone are no benchmarks of
# anything (they test the recorder's failure paths); thread_late and
# thread_first_calls are the designed late senders of analyze_threads.sh
# and thread_locations.sh, timing programs; thread_patterns is the threaded
# input of patterns_threads.sh, its threads' calls interleaved by timing.
BENCH_NOT_RUN="abort crash outdir_gone sample_work sample_threads sample_loader sample_soak thread_late thread_first_calls thread_patterns"

# Fails for an app of the project that no list names.
bench_check_lists() {
  local listed=" $BENCH_NOT_RUN $BENCH_THREADS " p n app
  for p in "${BENCH_KERNELS[@]}" "${BENCH_FEATURES[@]}" "${BENCH_OTHERS[@]}" "${BENCH_REFUSED[@]}"; do
    listed+="${p%% *} "
  done
  for n in $BENCH_NOT_RUN; do [[ -x $APPS/app_$n ]] || bad "app_$n is missing"; done
  for app in "$APPS"/app_*; do
    n=${app##*/app_}
    [[ $listed == *" $n "* ]] || bad "app_$n is in none of the benchmark test's lists"
  done
}

# Leading --gen=OPT arguments become BENCH_GEN (options for `tracefold
# bench`); the caller shifts BENCH_GEN_SHIFT of its arguments away.
bench_parse_gen() {
  BENCH_GEN=()
  BENCH_GEN_SHIFT=0
  while [[ ${1:-} == --gen=* ]]; do
    BENCH_GEN+=("${1#--gen=}")
    BENCH_GEN_SHIFT=$((BENCH_GEN_SHIFT + 1))
    shift
  done
}

bench_one() {
  local name=$1 np=$2 steps=$3
  shift 3
  bench_parse_gen "$@"
  shift "$BENCH_GEN_SHIFT"
  local what="$name at $np ranks" t0=$SECONDS
  CHECKS=$((CHECKS + 1))
  if [[ ! -x $APPS/app_$name ]]; then
    bad "$what: app_$name is missing"
    return 0
  fi
  record "$name" "$np" "$steps"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what: recording the program failed ($RC)"
    show_run "$DIR/err.txt"
    return 0
  fi
  bench_generate_run_diff "$what" "$DIR" "$np" "$t0" "$@"
}

# The rest of one program's check, once DIR/t.tf is recorded: generate it
# (with the options in BENCH_GEN), compile with BENCH_CC, run and record
# under BENCH_RUN (a launcher and its rank-count option), and compare the
# two traces with the diff options given.
BENCH_CC=$MPICC
BENCH_RUN=("${TRACEFOLD_MPIRUN:-mpirun}" -np)
bench_generate_run_diff() {
  local what=$1 d=$2 np=$3 t0=$4
  shift 4
  if ! "$TF" bench "${BENCH_GEN[@]}" "$d/t.tf" -o "$d/bench.c" 2>"$d/gen-err.txt"; then
    bad "$what: tracefold bench failed: $(cat "$d/gen-err.txt")"
    return 0
  fi
  # A resolved benchmark names every source it receives from.
  if [[ " $* " == *" --resolved "* ]] && grep -q 'MPI_ANY_SOURCE' "$d/bench.c"; then
    bad "$what: the benchmark still receives from MPI_ANY_SOURCE"
  fi
  if ! "$BENCH_CC" -std=c11 -Wall -Wextra -Werror -O1 "$d/bench.c" -o "$d/bench" 2>"$d/cc-err.txt"; then
    bad "$what: the benchmark does not compile cleanly with $BENCH_CC"
    head -n 20 "$d/cc-err.txt" >&2
    return 0
  fi
  limited "$d/bout.txt" "$d/berr.txt" "$TF" record --text -o "$d/b.tf" -- "${BENCH_RUN[@]}" "$np" "$d/bench"
  if [[ $LRC -ne 0 || ! -s $d/b.tf ]]; then
    bad "$what: running the benchmark under the recorder failed ($LRC)"
    show_run "$d/bout.txt" "$d/berr.txt"
    return 0
  fi
  grep -q "^bench: $np ranks, wall time" "$d/bout.txt" || bad "$what: the benchmark printed no wall time"
  local opts=("$@") a=$d/t.tf b=$d/b.tf
  local out drc=0
  out=$("$TF" diff --ignore-callsites "${opts[@]}" "$a" "$b" 2>&1) || drc=$?
  if [[ $drc -ne 0 ]]; then
    bad "$what: the benchmark's trace differs from the program's ($*): $(head -c 600 <<<"$out")"
    return 0
  fi
  ok "$what: same calls on every rank ($out${*:+; $*}), $(wc -l <"$d/bench.c") lines of C, $((SECONDS - t0)) s"
}

# bench_drop_field TRACE FIELD WHAT: TRACE rewritten as text without FIELD
# (as a recorder older than the field wrote it); fails (reported) if the
# trace has no such field.
bench_drop_field() {
  if ! "$TF" convert "$1" --text -o "$1.txt" 2>/dev/null || ! grep -q "^  field [a-z]* $2 " "$1.txt"; then
    bad "$3: the trace has no field $2 to drop"
    return 1
  fi
  sed -i "/^  field [a-z]* $2 /d" "$1.txt"
  mv "$1.txt" "$1"
}

refused_one() {
  local name=$1 np=$2 steps=$3 what="$1 at $2 ranks"
  CHECKS=$((CHECKS + 1))
  record "$name" "$np" "$steps"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what: recording the program failed ($RC)"
    return 0
  fi
  shift 3
  bench_refusal "$what" "$DIR" "$@"
}

# bench_refusal WHAT DIR [--drop-field F]: generation from DIR/t.tf must
# fail with an error naming a node and leave no file behind.
bench_refusal() {
  local what=$1 d=$2
  if [[ ${3:-} == --drop-field ]]; then
    what+=" without field $4"
    bench_drop_field "$d/t.tf" "$4" "$what" || return 0
  fi
  local rc=0
  "$TF" bench "$d/t.tf" -o "$d/bench.c" 2>"$d/gen-err.txt" || rc=$?
  if [[ $rc -eq 0 ]]; then
    bad "$what: generation was expected to refuse this program and did not"
  elif ! grep -Eq 'node #[0-9]+ \(MPI_[A-Za-z_]+ at ' "$d/gen-err.txt"; then
    bad "$what: the refusal does not name a node: $(cat "$d/gen-err.txt")"
  elif ls "$d"/bench.c* >/dev/null 2>&1; then
    bad "$what: a refused generation left a file behind: $(ls "$d"/bench.c*)"
  else
    ok "$what: refused ($(cat "$d/gen-err.txt"))"
  fi
}

