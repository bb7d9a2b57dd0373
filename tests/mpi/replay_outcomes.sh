#!/usr/bin/env bash
# Issue 13, item 4: what a replay must reproduce beyond the calls themselves.
#  - Empty completions: MPI_Waitall(0, NULL, ...) and the Testall, Testsome,
#    Waitsome, Testany forms with count 0 record links=[] (the replay passes
#    a non-NULL empty array, so without it the two traces differ).
#  - Completion outcomes: polls that found nothing find nothing in the
#    replay, polls and Waitany/Waitsome that completed requests complete the
#    same ones (tests/apps/polling.c); the replay prints no warning.
#  - Derived datatypes: every constructor records the id of the type it
#    made, and the replay's types get the same ids (tests/apps/dtypes.c).
#  - A recorded outcome the replay cannot produce is named in a warning.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
STEPS=3

# "op flag index outcount indices links" of every poll and completion of one rank
outcomes() {
  "$TF" expand "$1" -r "$2" | awk '/^MPI_(Test|Wait|Iprobe|Improbe)/ {
      line = $1
      for (i = 2; i <= NF; i++)
        if ($i ~ /^(flag|index|outcount|indices|links)=/) line = line " " $i
      print line }'
}

check_lossless polling 4 $STEPS "^polling: 4 ranks, $STEPS steps, checksum"
# Ranks 0 and 3 are the ends of the line: every step, one side has no
# neighbour and issues the five empty completions.
for r in 0 3; do
  for op in MPI_Waitall MPI_Testall MPI_Testsome MPI_Waitsome MPI_Testany; do
    n=$(grep -c "^$op .*links=\[\]" "$DIR/raw/rank-$r.txt" || true)
    [[ $n -eq $STEPS ]] || bad "polling rank $r: $n $op calls with links=[], want $STEPS (count 0, NULL array)"
  done
done
# Testsome/Waitsome that completed something say which requests.
if grep -E '^MPI_(Testsome|Waitsome) .*outcount=[1-9]' "$DIR/raw/rank-1.txt" | grep -vq 'indices=\['; then
  bad "polling: a Testsome/Waitsome with outcount > 0 recorded no indices"
fi
POLL_DIR=$DIR

nothing() { # polls of a trace that found nothing, all ranks
  local r n=0
  for r in 0 1 2 3; do
    n=$((n + $(outcomes "$1" $r | grep -Ec '^MPI_(Test|Testall|Testany|Iprobe) .*flag=0|^MPI_Testsome .*outcount=0 ' || true)))
  done
  echo "$n"
}

replay_recorded() { # TRACE NP OUT.tf: record a replay of TRACE
  limited "$3.out" "$3.err" "$TF" record -o "$3" -- "$MPIRUN" -np "$2" "$TF" replay "$1"
  if [[ $LRC -ne 0 || ! -s $3 ]]; then
    bad "replay of $1 failed ($LRC)"
    show_run "$3.out" "$3.err"
    return 1
  fi
  if grep -q 'warning' "$3.err"; then
    bad "replay of $1 warned: $(grep -m 3 warning "$3.err")"
  fi
}

if replay_recorded "$POLL_DIR/t.tf" 4 "$WORK/polling-t1.tf"; then
  for r in 0 1 2 3; do
    if ! diff <(outcomes "$POLL_DIR/t.tf" $r) <(outcomes "$WORK/polling-t1.tf" $r) >"$WORK/outcomes.diff"; then
      bad "polling rank $r: poll and completion outcomes differ between the program and its replay"
      head -n 6 "$WORK/outcomes.diff" >&2
    fi
  done
  n0=$(nothing "$POLL_DIR/t.tf")
  n1=$(nothing "$WORK/polling-t1.tf")
  [[ $n0 -eq $n1 ]] || bad "polling: $n0 polls found nothing in the program, $n1 in its replay"
  ok "polling: outcomes of every poll and completion replayed ($n0 polls found nothing)"
fi

check_lossless dtypes 4 $STEPS "^dtypes: 4 ranks, $STEPS steps, checksum"
for op in MPI_Type_contiguous MPI_Type_vector MPI_Type_create_hvector MPI_Type_indexed \
  MPI_Type_create_hindexed MPI_Type_create_indexed_block MPI_Type_create_hindexed_block \
  MPI_Type_create_struct MPI_Type_create_subarray MPI_Type_create_darray MPI_Type_create_resized \
  MPI_Type_dup MPI_Type_create_f90_real; do
  grep -Eq "^$op .*newtype=1[0-9]{3}" "$DIR/raw/rank-0.txt" || bad "dtypes: no $op with a newtype id in rank 0's raw log"
done
for op in MPI_Type_get_envelope MPI_Type_get_contents MPI_Type_get_extent MPI_Type_size \
  MPI_Type_commit MPI_Type_free; do
  grep -Eq "^$op .*dtype=" "$DIR/raw/rank-0.txt" || bad "dtypes: no $op naming its type in rank 0's raw log"
done
if replay_recorded "$DIR/t.tf" 4 "$WORK/dtypes-t1.tf"; then
  d=$("$TF" diff --ignore-callsites "$DIR/t.tf" "$WORK/dtypes-t1.tf" 2>&1) ||
    bad "dtypes: the replay's types differ: $d"
  ok "dtypes: replay gives its types the recorded ids"
fi

# A Testany recorded as completing a request the trace gives it as
# MPI_REQUEST_NULL: the replay says so and goes on.
mkdir -p "$WORK/warn"
cat >"$WORK/warn/rank-0.txt" <<'LOG'
rank 0 size 2
site 0 app+0x10
site 1 app+0x20
site 2 app+0x30
site 3 app+0x40
site 4 app+0x50
MPI_Init site=0 compute_ns=0 comm_ns=1000
MPI_Irecv site=1 peer=1 tag=5 count=1 dtype=7 dsize=4 comm=0 compute_ns=100 comm_ns=100
MPI_Testany site=2 flag=1 index=0 links=[null,1] compute_ns=100 comm_ns=100
MPI_Wait site=3 links=[1] compute_ns=100 comm_ns=100
MPI_Finalize site=4 compute_ns=100 comm_ns=100
LOG
cat >"$WORK/warn/rank-1.txt" <<'LOG'
rank 1 size 2
site 0 app+0x10
site 5 app+0x60
site 4 app+0x50
MPI_Init site=0 compute_ns=0 comm_ns=1000
MPI_Send site=5 peer=0 tag=5 count=1 dtype=7 dsize=4 comm=0 compute_ns=100 comm_ns=100
MPI_Finalize site=4 compute_ns=100 comm_ns=100
LOG
"$TF" fold "$WORK/warn" -o "$WORK/warn.tf" >/dev/null
limited "$WORK/warn.out" "$WORK/warn.err" "$MPIRUN" -np 2 "$TF" replay "$WORK/warn.tf"
want='tracefold replay: warning: rank 0, node #2, event 1 (MPI_Testany): the recorded index 0 is no active request here'
if [[ $LRC -ne 0 ]]; then
  bad "replay of the hand-made Testany trace exited $LRC"
  show_run "$WORK/warn.out" "$WORK/warn.err"
elif ! grep -qxF "$want" "$WORK/warn.err"; then
  bad "replay of the hand-made Testany trace did not warn '$want'"
  show_run "$WORK/warn.err"
else
  ok "a recorded outcome the replay cannot force is named in a warning"
fi
finish
