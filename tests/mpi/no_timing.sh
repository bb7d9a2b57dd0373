#!/usr/bin/env bash
# `tracefold record --no-timing` (TRACEFOLD_NO_TIMING): the trace holds the
# same calls and parameters as a timed recording of the same run, but no time
# histogram; it is smaller in the compact form; it replays (no computation to
# reproduce); and the environment variable alone, without the CLI, has the
# same effect.
set -euo pipefail
TF=$1; SRC=$2; APPS=$3
# shellcheck source=../apps/mpi_test_lib.bash
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

limited full.out full.err "$TF" record -o full.tf -- "$MPIRUN" -np 4 "$APPS/app_cg" 20
[[ $LRC -eq 0 && -s full.tf ]] || { bad "timed recording failed ($LRC)"; show_run full.err; }
limited nt.out nt.err "$TF" record --no-timing -o nt.tf -- "$MPIRUN" -np 4 "$APPS/app_cg" 20
[[ $LRC -eq 0 && -s nt.tf ]] || { bad "--no-timing recording failed ($LRC)"; show_run nt.err; }

if [[ -s full.tf && -s nt.tf ]]; then
  "$TF" convert full.tf --text -o - >full.txt
  "$TF" convert nt.tf --text -o - >nt.txt
  timed=$(grep -c '^  time pred=' full.txt || true)
  untimed=$(grep -c -E '^  time pred=|^    (compute|comm) n=[1-9]' nt.txt || true)
  ((timed > 0)) || bad "the timed trace has no time blocks"
  ((untimed == 0)) || bad "--no-timing left $untimed time lines"
  # Everything but the time blocks is the same (cg's calls do not depend on
  # timing), but for the header: a `pred=other` block makes text version 5.
  if diff <(grep -v -E '^tracefold-trace |^  time |^    (compute|comm|stat) ' full.txt) \
    <(grep -v '^tracefold-trace ' nt.txt) >diff.txt; then
    ok "--no-timing: same nodes and parameters, no time blocks ($timed in the timed trace)"
  else
    bad "--no-timing changed more than the timing: $(head -n 5 diff.txt)"
  fi
  "$TF" diff full.tf nt.tf >/dev/null || bad "tracefold diff: the timed and untimed traces differ"
  full_b=$(stat -c %s full.tf); nt_b=$(stat -c %s nt.tf)
  ((nt_b < full_b)) || bad "--no-timing trace ($nt_b B) not smaller than the timed one ($full_b B)"
  ok "compact sizes: timed $full_b B, no timing $nt_b B"
  # Replay needs no times: it runs the calls without computation.
  limited rep.out rep.err "$MPIRUN" -np 4 "$TF" replay nt.tf
  if [[ $LRC -eq 0 ]] && grep -q '^replay: 4 ranks' rep.out; then
    ok "replay of the untimed trace: $(head -n 1 rep.out)"
  else
    bad "replay of the untimed trace failed ($LRC)"; show_run rep.out rep.err
  fi
fi

# The recorder reads TRACEFOLD_NO_TIMING itself (a singleton run: no
# launcher, whose way of passing variables differs between MPIs).
limited env.out env.err env LD_PRELOAD="$(dirname "$TF")/../record/libtracefold.so" \
  TRACEFOLD_OUTPUT="$WORK/env.tf" TRACEFOLD_NO_TIMING=1 "$APPS/app_ring" 5
if [[ $LRC -ne 0 || ! -s env.tf ]]; then
  bad "recording through the environment failed ($LRC)"; show_run env.err
elif "$TF" convert env.tf --text -o - | grep -q '^  time pred='; then
  bad "TRACEFOLD_NO_TIMING=1 left time blocks"
else
  ok "TRACEFOLD_NO_TIMING=1: no time blocks"
fi
finish
