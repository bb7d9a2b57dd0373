#!/usr/bin/env bash
# The test library's `limited` (tests/apps/mpi_test_lib.bash) on a run
# that hangs: exit status 124, every process of the run's tree killed, and
# before that each one's stacks in the run's stderr file, so that a hang
# seen once in hundreds of CI runs can be read from CTest's output.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

# A parent that waits for its child, both asleep: a tree of two processes.
cat >hang.sh <<'HANG'
sleep 300 &
echo "child $!"
wait
HANG
RUN_TIMEOUT=2
t0=$SECONDS
limited out.txt err.txt bash hang.sh 2>stderr.txt
took=$((SECONDS - t0))
child=$(sed -n 's/^child //p' out.txt)

CHECKS=$((CHECKS + 1))
if [[ $LRC -eq 124 ]]; then ok "exit status 124 after $took s"; else bad "exit status $LRC, not 124"; fi

CHECKS=$((CHECKS + 1))
if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
  bad "the sleeping child $child was left running"
  kill -KILL "$child"
else
  ok "the child ${child:-?} was killed"
fi

# One stack section per process, each with frames: bash waiting for its
# child, sleep in its nanosleep; in the run's stderr file and on the
# test's own stderr, which CTest shows (tests show only a file's tail).
CHECKS=$((CHECKS + 1))
if ! cmp -s <(grep -E '^(---|#[0-9])' err.txt) <(grep -E '^(---|#[0-9])' stderr.txt); then
  bad "the stacks in err.txt are not those on stderr"
  cat stderr.txt >&2
fi
sections=$(grep -c '^--- stacks of pid ' err.txt || true)
if [[ $sections -ne 2 ]]; then
  bad "want the stacks of 2 processes, got $sections"
  show_run err.txt
elif ! grep -A30 "^--- stacks of pid [0-9]*: sleep 300" err.txt | grep -Eq '^#[0-9]+ .*nanosleep'; then
  bad "no backtrace of the sleeping child in nanosleep"
  cat err.txt >&2
elif ! grep -A30 "^--- stacks of pid [0-9]*: bash hang.sh" err.txt | grep -Eq '^#[0-9]+ .*wait'; then
  bad "no backtrace of the waiting parent"
  cat err.txt >&2
else
  ok "stacks of both processes: $(grep -Ec '^#[0-9]+ ' err.txt) frames"
fi
finish
