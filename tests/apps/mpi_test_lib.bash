# Helpers sourced by tests/mpi/*.sh (not a test itself). The caller sets
#   TF=$1 (tracefold binary), SRC=$2 (source tree), APPS=$3 (built app_* programs)
# and sources this file; it makes $WORK (removed on exit) and cds into it.
#
#   record NAME NP STEPS [EXTRA...]   tracefold record --text -o NAME-npNP/t.tf --raw-log
#                                     NAME-npNP/raw -- mpirun -np NP app_NAME STEPS
#                                     -> $DIR, $RC (exit status), $DIR/out.txt, err.txt
#                                     (--text: tests grep the trace; the recorder
#                                     still writes the compact form, which record
#                                     reads back and rewrites as text)
#   plain NAME NP STEPS               the same run without tracefold -> $PRC,
#                                     $PDIR/plain.txt, $PDIR/plain-err.txt
#   check_lossless NAME NP STEPS REGEX   record, then: exit 0, rank 0 printed REGEX,
#                                     trace written, no unresolved request links,
#                                     `tracefold diff raw t.tf` says same
#   is_hydra                          true when the launcher is MPICH's Hydra
#   needs_yielding_waits NP           exit 77 (not run) under MPICH when NP ranks
#                                     would share the cores (see below)
#   rank_env NAME=VALUE...            -> RANK_ENV: the launcher's options giving
#                                     every rank these variables (Open MPI's -x,
#                                     Hydra's -genv, as `tracefold record` does)
#   $MPICC                            the compiler wrapper of the MPI this build
#                                     uses (TRACEFOLD_MPICC, set by CTest)
#   bad MESSAGE                       remember a failure (the script goes on)
#   finish                            summary; exit 1 if anything failed
#
# Every run is limited to $RUN_TIMEOUT seconds (default 60): a hang fails
# the test instead of blocking CTest, the stacks of the hung launcher and
# its MPI processes (found as descendants of the run, by pid) go to the
# run's stderr file (gdb), and they are killed.
set -euo pipefail

export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}

RUN_TIMEOUT=${RUN_TIMEOUT:-60}
MPICC=${TRACEFOLD_MPICC:-mpicc}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# Open MPI's launchers create their session directory under one shared
# top directory (/tmp/ompi.HOST.UID) and fail with "orte_session_dir
# failed ... File exists" when two of them race to create it (tests run
# in parallel under CTest, and some start two runs at once). Each test
# gets its own; MPICH ignores the variable.
export OMPI_MCA_orte_tmpdir_base=${OMPI_MCA_orte_tmpdir_base:-$WORK/.ompi}
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
FAILURES=()
CHECKS=0

bad() {
  FAILURES+=("$*")
  echo "FAIL: $*" >&2
}

ok() {
  echo "ok: $*"
}

# Shows the tail of a run's output files on stderr (after a failure).
show_run() {
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    echo "--- $f (last 15 lines)" >&2
    tail -n 15 "$f" >&2
  done
}

# descendants PID: every process below PID, deepest last.
descendants() {
  local c
  for c in $(pgrep -P "$1" || true); do
    echo "$c"
    descendants "$c"
  done
}

# dump_stacks ERR PID... : every thread's backtrace of each PID, appended
# to ERR and shown on stderr (tests show only the tail of a run's files),
# so that a hang seen once in hundreds of runs leaves its stacks in the
# output CTest prints on failure. gdb attaches to all of them at once,
# each for 45 s at most: on a loaded machine one attach can take 10-20 s.
dump_stacks() {
  local err=$1 p
  shift
  if ! command -v gdb >/dev/null; then
    echo "timeout: no gdb, no stacks (scripts/install-deps.sh installs it)" >>"$err"
    return 0
  fi
  local dir gdbs=()
  dir=$(mktemp -d)
  for p in "$@"; do
    # debuginfod would try the network for every library's symbols.
    {
      echo "--- stacks of pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null || echo gone)"
      DEBUGINFOD_URLS='' timeout 45 gdb -nx -batch -iex 'set debuginfod enabled off' -p "$p" \
        -ex 'thread apply all bt' </dev/null 2>&1 | grep -v '^\[New LWP\|^\[Thread debugging'
    } >"$dir/$p" &
    gdbs+=($!)
  done
  # Not a bare wait: the hung command is this shell's child too.
  wait "${gdbs[@]}" || true
  for p in "$@"; do tee -a "$err" <"$dir/$p" >&2; done
  rm -rf "$dir"
}

# limited OUT ERR CMD... : runs CMD with stdout/stderr to OUT/ERR; $LRC is
# its exit status, or 124 when it ran out of time (then the stacks of it
# and of everything it started are appended to ERR, and they are killed).
# The shell waits for CMD itself, so a run is over the moment CMD exits (a
# suite makes thousands of runs; polling every 0.1 s cost 0.05-0.1 s
# each). A watchdog subshell signals this shell when the time is up; it
# waits with the read builtin on a pipe nobody writes to (LIMITED_NEVER),
# so it has no child of its own, and is stopped with SIGKILL, which no trap
# sees (any other signal could make it run the EXIT trap that removes
# $WORK before it disarms it).
exec {LIMITED_NEVER}<> <(:)
limited() {
  local out=$1 err=$2
  shift 2
  local pid dog expired=0 me=$BASHPID
  trap 'expired=1' USR2
  "$@" >"$out" 2>"$err" &
  pid=$!
  (
    trap - EXIT
    read -r -t "$RUN_TIMEOUT" -u "$LIMITED_NEVER" || kill -USR2 "$me"
  ) </dev/null >/dev/null 2>&1 &
  dog=$!
  LRC=0
  wait "$pid" || LRC=$?
  if ((expired)); then
    local pids below
    below=$(descendants "$pid")
    pids="$pid ${below//$'\n'/ }"
    echo "timeout: $* still running after $RUN_TIMEOUT s (pids $pids)" >>"$err"
    # shellcheck disable=SC2086
    dump_stacks "$err" $pids
    echo "timeout: killing pids $pids" >>"$err"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    sleep 2
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    LRC=124
  fi
  kill -KILL "$dog" 2>/dev/null || true
  wait "$dog" 2>/dev/null || true
  trap - USR2
}

# is_hydra: whether the launcher is MPICH's Hydra (it names itself in
# --version; Open MPI's mpirun does not). Hydra SIGKILLs the other ranks at
# once when one aborts or fails, so only that rank saves a partial trace.
is_hydra() {
  if [[ -z ${IS_HYDRA:-} ]]; then
    # Read whole first: grep -q closing the pipe early fails it under pipefail.
    local v
    v=$("${TRACEFOLD_MPIRUN:-mpirun}" --version 2>&1 || true)
    IS_HYDRA=no
    [[ ${v,,} == *hydra* ]] && IS_HYDRA=yes
  fi
  [[ $IS_HYDRA == yes ]]
}

# needs_yielding_waits NP: for the tests that compare measured times with
# designed ones, which hold only when a rank waiting in MPI leaves the
# processor to the rank it waits for (analyze_lib.bash and diagnose_lib.bash
# set Open MPI's mpi_yield_when_idle). MPICH 4.0 (ch4:ucx) spins in every
# wait and has no such setting: with NP ranks on no more cores than that,
# the designed times cannot be met, so the test says why and exits 77,
# which CTest reports as not run (tests/apps/CMakeLists.txt).
needs_yielding_waits() {
  local cores
  cores=$(nproc)
  if is_hydra && ((cores <= $1)); then
    echo "not run under MPICH: its waiting ranks spin (no yield setting in MPICH 4.0, ch4:ucx)" \
      "and $1 ranks share $cores cores, so the measured waits and computation times are not" \
      "the designed ones this test checks"
    exit 77
  fi
}

rank_env() {
  local v
  RANK_ENV=()
  if is_hydra; then
    for v in "$@"; do RANK_ENV+=(-genv "${v%%=*}" "${v#*=}"); done
  else
    for v in "$@"; do RANK_ENV+=(-x "$v"); done
  fi
}

record() {
  local name=$1 np=$2 steps=$3
  shift 3
  DIR="$WORK/$name-np$np"
  rm -rf "$DIR"
  mkdir -p "$DIR"
  limited "$DIR/out.txt" "$DIR/err.txt" \
    "$TF" record --text -o "$DIR/t.tf" --raw-log "$DIR/raw" -- "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$APPS/app_$name" "$steps" "$@"
  RC=$LRC
}

plain() {
  local name=$1 np=$2 steps=$3
  shift 3
  PDIR="$WORK/$name-np$np-plain"
  rm -rf "$PDIR"
  mkdir -p "$PDIR"
  limited "$PDIR/plain.txt" "$PDIR/plain-err.txt" "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$APPS/app_$name" "$steps" "$@"
  PRC=$LRC
}

check_lossless() {
  local name=$1 np=$2 steps=$3 want=$4
  local what="$name at $np ranks, $steps steps"
  CHECKS=$((CHECKS + 1))
  local t0=$SECONDS
  record "$name" "$np" "$steps"
  if [[ $RC -ne 0 ]]; then
    bad "$what: tracefold record exited $RC"
    show_run "$DIR/out.txt" "$DIR/err.txt"
    return 0
  fi
  if ! grep -Eq "$want" "$DIR/out.txt"; then
    bad "$what: rank 0 did not print /$want/"
    show_run "$DIR/out.txt" "$DIR/err.txt"
    return 0
  fi
  if [[ ! -s $DIR/t.tf ]]; then
    bad "$what: no trace written"
    show_run "$DIR/err.txt"
    return 0
  fi
  if [[ ! -f $DIR/raw/rank-$((np - 1)).txt ]]; then
    bad "$what: raw logs missing (want rank-0..$((np - 1)).txt)"
    ls -l "$DIR/raw" >&2 || true
    return 0
  fi
  # A completion call whose request the recorder could not trace back.
  if grep -E '^  field list links .*undef' "$DIR/t.tf" >/dev/null; then
    bad "$what: request links the recorder could not resolve (undef)"
    grep -E '^  field list links .*undef' "$DIR/t.tf" | head -n 3 >&2
  fi
  local d drc=0
  d=$("$TF" diff "$DIR/raw" "$DIR/t.tf" 2>&1) || drc=$?
  if [[ $drc -ne 0 ]]; then
    bad "$what: trace differs from the raw logs (diff exit $drc): $d"
    return 0
  fi
  ok "$what: lossless ($d; $(grep '^nodes' "$DIR/t.tf"), $(stat -c %s "$DIR/t.tf") bytes, $((SECONDS - t0)) s)"
}

finish() {
  if [[ ${#FAILURES[@]} -gt 0 ]]; then
    echo "${#FAILURES[@]} failure(s):" >&2
    printf '  %s\n' "${FAILURES[@]}" >&2
    exit 1
  fi
  echo "all checks passed"
}

# record_threads NP APP ARGS... : `tracefold record --timeline -o t.tf` of
# `mpirun -np NP app_APP ARGS` in $WORK (out.txt, err.txt). Exits 77 (not
# run) when the MPI does not provide MPI_THREAD_MULTIPLE (the program
# prints "not provided"), and fails the test when the recording does.
record_threads() {
  local np=$1 app=$2
  shift 2
  limited out.txt err.txt "$TF" record --timeline -o t.tf -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$APPS/app_$app" "$@"
  if grep -q "not provided" out.txt; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE: not run"
    exit 77
  fi
  if [[ $LRC -ne 0 ]]; then
    bad "recording exited $LRC"
    show_run out.txt err.txt
    finish
  fi
}

# record_timed_threads NP APP ARGS... : record_threads for the tests that
# check the times each thread recorded: waiting ranks yield
# (needs_yielding_waits, which exits 77 where they cannot).
record_timed_threads() {
  export OMPI_MCA_mpi_yield_when_idle=1
  needs_yielding_waits "$1"
  record_threads "$@"
}

# record_thread_late DELAY: record_timed_threads of tests/apps/thread_late.c
# at 2 ranks -> $SLEPT, the sleep (s) rank 1's worker measured.
record_thread_late() {
  record_timed_threads 2 thread_late "$1"
  SLEPT=$(sed -n 's/^thread_late: rank 1 thread 1 slept \([0-9.]*\) s$/\1/p' out.txt)
  [[ -n $SLEPT ]] || {
    bad "the program did not print its sleep"
    show_run out.txt
    finish
  }
}
