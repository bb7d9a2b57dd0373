#!/usr/bin/env bash
# Replay refuses bad input with a clear message, a non-zero exit and no
# hang: a different rank count, a corrupt trace, an operation replay cannot
# perform, a missing file. Also: --deterministic resolves ANY_SOURCE
# receives to the senders the original run matched (LU-like and
# master-worker programs, and a persistent wildcard receive), and the
# what-if knobs run.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# expect_error WHAT REGEX CMD...: non-zero exit within the time limit, REGEX on stderr
expect_error() {
  local what=$1 want=$2
  shift 2
  CHECKS=$((CHECKS + 1))
  limited "$WORK/e.out" "$WORK/e.err" "$@"
  if [[ $LRC -eq 0 ]]; then bad "$what: exit status 0"; return 0; fi
  if [[ $LRC -eq 124 ]]; then bad "$what: hung"; return 0; fi
  if ! grep -Eq "$want" "$WORK/e.err"; then
    bad "$what: stderr lacks /$want/"; show_run "$WORK/e.err"; return 0
  fi
  ok "$what: exit $LRC, $(grep -Eo "$want" "$WORK/e.err" | head -n 1)"
}

limited ring.out ring.err "$TF" record --text -o ring.tf -- "$MPIRUN" -np 4 "$APPS/app_ring" 10
[[ $LRC -eq 0 && -s ring.tf ]] || { bad "recording the ring failed"; finish; }

expect_error "wrong rank count" "ring.tf was recorded with 4 ranks; run the replay with mpirun -np 4 \(this run has 2\)" \
  "$MPIRUN" -np 2 "$TF" replay ring.tf

# A node count that does not match the nodes in the file.
sed 's/^nodes [0-9]*/nodes 999/' ring.tf >corrupt.tf
expect_error "corrupt trace" "corrupt.tf.*(line|node)" "$MPIRUN" -np 4 "$TF" replay corrupt.tf
head -c 300 ring.tf >truncated.tf
expect_error "truncated trace" "truncated.tf" "$MPIRUN" -np 4 "$TF" replay truncated.tf
expect_error "missing trace" "nothere.tf" "$MPIRUN" -np 4 "$TF" replay nothere.tf

# One-sided communication is recorded but not replayed.
mkdir -p rma
for r in 0 1; do
  {
    echo "rank $r size 2"
    echo "site 0 app+0x10"
    echo "site 1 app+0x20"
    echo "MPI_Init site=0"
    echo "MPI_Put site=1 count=4 dtype=14 dsize=8 target=$((1 - r))"
    echo "MPI_Finalize site=0"
  } >rma/rank-$r.txt
done
"$TF" fold rma -o rma.tf || bad "folding the one-sided raw logs failed"
expect_error "unsupported operation" "node #[0-9]+ \(MPI_Put at app\+0x20\): replay cannot perform MPI_Put" "$MPIRUN" -np 2 "$TF" replay rma.tf

# --deterministic: blocking wildcard receives take the recorded matched source.
deterministic() {
  local name=$1 np=$2 steps=$3
  CHECKS=$((CHECKS + 1))
  limited "$name.out" "$name.err" "$TF" record -o "$name.tf" -- "$MPIRUN" -np "$np" "$APPS/app_$name" "$steps"
  [[ $LRC -eq 0 ]] || { bad "$name: recording failed"; return 0; }
  limited "$name-d.out" "$name-d.err" "$TF" record -o "$name-d.tf" -- "$MPIRUN" -np "$np" "$TF" replay --deterministic "$name.tf"
  [[ $LRC -eq 0 ]] || { bad "$name: deterministic replay failed ($LRC)"; show_run "$name-d.err"; return 0; }
  local r wild=0
  for ((r = 0; r < np; r++)); do
    # original: the source each MPI_Recv matched; replay: the source it named
    "$TF" expand "$name.tf" -r $r | awk '$1 == "MPI_Recv" { p = ""; s = ""
        for (i = 2; i <= NF; i++) { if ($i ~ /^peer=/) p = substr($i, 6); if ($i ~ /^src=/) s = substr($i, 5) }
        if (p == "any") { p = s; w++ } print p } END { print "wildcards", w + 0 > "/dev/stderr" }' >want.txt 2>wild.txt
    "$TF" expand "$name-d.tf" -r $r | awk '$1 == "MPI_Recv" { for (i = 2; i <= NF; i++) if ($i ~ /^peer=/) print substr($i, 6) }' >got.txt
    wild=$((wild + $(awk '{print $2}' wild.txt)))
    if ! cmp -s want.txt got.txt; then
      bad "$name: rank $r receives named other sources than the original matched"
      diff want.txt got.txt | head -n 5 >&2
      return 0
    fi
    if grep -q any got.txt; then bad "$name: rank $r still receives from any source"; return 0; fi
  done
  [[ $wild -gt 0 ]] || { bad "$name: the original has no wildcard receives to resolve"; return 0; }
  ok "$name: --deterministic receives from the recorded senders ($wild wildcard receives)"
}
deterministic lu 4 3
deterministic master_worker 4 12

# --deterministic with a persistent wildcard receive: each MPI_Start of
# rank 0's MPI_Recv_init(MPI_ANY_SOURCE) must receive from the rank that
# start matched originally (the replay posts a plain receive naming it).
CHECKS=$((CHECKS + 1))
limited pw.out pw.err "$TF" record -o pw.tf -- "$MPIRUN" -np 4 "$APPS/app_persistent_wild" 8
if [[ $LRC -ne 0 ]]; then
  bad "persistent_wild: recording failed ($LRC)"
  show_run pw.err
else
  limited pwd.out pwd.err "$TF" record -o pwd.tf -- "$MPIRUN" -np 4 "$TF" replay --deterministic pw.tf
  if [[ $LRC -ne 0 ]]; then
    bad "persistent_wild: deterministic replay failed ($LRC)"
    show_run pwd.err
  else
    want=$("$TF" expand pw.tf -r 0 | awk '$1 == "MPI_Wait" { for (i = 2; i <= NF; i++) if ($i ~ /^src=/) printf "%s ", substr($i, 5) }')
    got=$("$TF" expand pwd.tf -r 0 | awk '$1 == "MPI_Irecv" { for (i = 2; i <= NF; i++) if ($i ~ /^peer=/) printf "%s ", substr($i, 6) }')
    if [[ $(wc -w <<<"$want") -ne 24 ]]; then
      bad "persistent_wild: the original records $(wc -w <<<"$want") matched sources on rank 0, want 24"
    elif [[ $want != "$got" ]]; then
      bad "persistent_wild: the deterministic replay received from '$got', the original matched '$want'"
    else
      ok "persistent_wild: --deterministic starts receive from the recorded senders (24 starts)"
    fi
  fi
  # Without --deterministic the persistent wildcard receive is started as
  # recorded.
  limited pwr.out pwr.err "$MPIRUN" -np 4 "$TF" replay pw.tf
  [[ $LRC -eq 0 ]] || { bad "persistent_wild: plain replay failed ($LRC)"; show_run pwr.err; }
fi

# What-if knobs: twice the message size doubles the bytes sent.
CHECKS=$((CHECKS + 1))
limited k1.out k1.err "$MPIRUN" -np 4 "$TF" replay --no-compute ring.tf
limited k2.out k2.err "$MPIRUN" -np 4 "$TF" replay --no-compute --message-scale 2 --compute-scale 0.5 --timing sample ring.tf
b1=$(grep -Eo '[0-9]+ bytes sent' k1.out | awk '{print $1}')
b2=$(grep -Eo '[0-9]+ bytes sent' k2.out | awk '{print $1}')
if [[ -n $b1 && -n $b2 && $b2 -eq $((2 * b1)) && $b1 -gt 0 ]]; then
  ok "--message-scale 2: $b1 -> $b2 bytes sent"
else
  bad "--message-scale 2: bytes sent $b1 -> $b2"; show_run k1.out k1.err k2.out k2.err
fi
# Scales limited to call sites the trace does not have change nothing; the
# sleeping compute mode runs.
CHECKS=$((CHECKS + 1))
limited k3.out k3.err "$MPIRUN" -np 4 "$TF" replay --sleep --message-scale 2 --scale-sites 9999 ring.tf
b3=$(grep -Eo '[0-9]+ bytes sent' k3.out | awk '{print $1}')
if [[ $LRC -eq 0 && $b3 == "$b1" ]]; then
  ok "--scale-sites 9999 --sleep: $b3 bytes sent, as unscaled"
else
  bad "--scale-sites 9999: exit $LRC, bytes sent $b3 (unscaled $b1)"; show_run k3.out k3.err
fi
expect_error "bad --scale-sites" "'x' is not a call-site id" "$MPIRUN" -np 4 "$TF" replay --scale-sites 1,x ring.tf
finish
