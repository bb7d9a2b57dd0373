#!/usr/bin/env bash
# tracefold simulate on SimGrid's SMPI replay, with traces recorded for real:
#  - a computation-only trace: the predicted time is exactly the largest
#    per-rank sum of the trace's (mean) compute times, at the nanosecond,
#    in both --compute modes;
#  - sim_mix (1 MiB messages, every point-to-point form and world
#    collective SMPI replays): it simulates with nothing dropped, and
#    doubling the link bandwidth lowers the predicted time;
#  - an operation SMPI cannot replay (nonblocking collectives) is an error
#    naming it, or a warning naming it with --skip-unsupported;
#  - a bad platform file is an error that names it.
TF=$1; SRC=$2; APPS=$3
# shellcheck source=../apps/mpi_test_lib.bash
source "$SRC/tests/apps/mpi_test_lib.bash"
RUN_TIMEOUT=120

# Largest per-rank sum of compute_ns over the expansion, in seconds (9 decimals).
compute_sum() {
  local trace=$1 np=$2 r best=0 s
  for ((r = 0; r < np; r++)); do
    s=$("$TF" expand "$trace" -r "$r" --timing | grep -o 'compute_ns=[0-9]*' | cut -d= -f2 |
      awk '{s += $1} END {printf "%d", s}')
    ((s > best)) && best=$s
  done
  printf '%d.%09d' $((best / 1000000000)) $((best % 1000000000))
}
predicted() { sed -n 's/^predicted run time: \([0-9.]*\) s$/\1/p' "$1"; }

# --- exact: computation only
record sim_compute 4 25 300
if [[ $RC -ne 0 ]]; then
  bad "recording sim_compute failed ($RC)"; show_run "$DIR/out.txt" "$DIR/err.txt"; finish
fi
want=$(compute_sum "$DIR/t.tf" 4)
for mode in flops times; do
  limited "sim-$mode.txt" "sim-$mode.err" "$TF" simulate "$DIR/t.tf" --compute "$mode" -o "sim-$mode"
  got=$(predicted "sim-$mode.txt")
  if [[ $LRC -ne 0 || -z $got ]]; then
    bad "compute-only ($mode): simulate exited $LRC"; show_run "sim-$mode.txt" "sim-$mode.err"
  elif [[ $got != "$want" ]]; then
    bad "compute-only ($mode): predicted $got s, the compute times add up to $want s"
  else
    ok "compute-only ($mode): predicted $got s = sum of compute times"
  fi
done
# Every rank's communication time is zero: nothing communicates.
if awk -F, 'NR > 1 && $2 != 0 {bad = 1} END {exit bad}' sim-flops/ranks.csv; then
  ok "compute-only: no communication time on any rank"
else
  bad "compute-only: communication time where nothing communicates"; cat sim-flops/ranks.csv >&2
fi
# The host speed scales flops: a platform twice as fast halves the time
# (compute recorded at 1 Gf/s, simulated on 2 Gf/s hosts).
sed 's/speed="1000000000f"/speed="2000000000f"/' sim-flops/platform.xml > fast.xml
limited fast.txt fast.err "$TF" simulate "$DIR/t.tf" --platform fast.xml
got=$(predicted fast.txt)
if [[ $LRC -eq 0 && -n $got ]] && awk -v a="$got" -v b="$want" 'BEGIN {d = a * 2 - b; exit !(d < 1e-8 && d > -1e-8)}'; then
  ok "compute-only on 2 Gf/s hosts: $got s (half of $want s)"
else
  bad "compute-only on 2 Gf/s hosts: predicted '$got' s (exit $LRC), want half of $want s"
  show_run fast.txt fast.err
fi

# --- sim_mix: everything maps; bandwidth direction
record sim_mix 8 3
if [[ $RC -ne 0 ]]; then
  bad "recording sim_mix failed ($RC)"; show_run "$DIR/out.txt" "$DIR/err.txt"; finish
fi
mix=$DIR/t.tf
limited mix1.txt mix1.err "$TF" simulate "$mix" --bandwidth 1e9 -o mix1
limited mix2.txt mix2.err "$TF" simulate "$mix" --bandwidth 2e9 -o mix2
t1=$(predicted mix1.txt); t2=$(predicted mix2.txt)
if [[ -z $t1 || -z $t2 ]]; then
  bad "sim_mix did not simulate"; show_run mix1.txt mix1.err mix2.txt mix2.err
else
  if grep -q warning mix1.err; then bad "sim_mix: operations dropped: $(cat mix1.err)"; fi
  for a in isend irecv wait test sendRecv send recv bcast allreduce reduce alltoall alltoallv \
    gather allgather allgatherv scatter reducescatter scan barrier; do
    grep -qh "^[0-9]* $a\b" mix1/rank-*.act || bad "sim_mix: no '$a' action in the files"
  done
  if awk -v a="$t1" -v b="$t2" 'BEGIN {exit !(b < a * 0.8)}'; then
    ok "sim_mix at 8 ranks: ${t1} s at 1 GB/s links, ${t2} s at 2 GB/s"
  else
    bad "sim_mix: doubling the bandwidth did not lower the time enough ($t1 s -> $t2 s)"
  fi
  grep -q "^busiest links" mix1.txt && grep -Eq '^  [^ ]+  [0-9]+ B  [0-9.]+ %$' mix1.txt ||
    bad "sim_mix: no busiest links printed"
  awk -F, 'NR > 1 && $2 > 0 {n++} END {exit n != 8}' mix1/ranks.csv ||
    bad "sim_mix: not every rank has communication time"
fi

# --- an operation SMPI cannot replay
record nbc 4 3
if [[ $RC -ne 0 ]]; then
  bad "recording nbc failed ($RC)"
else
  limited nbc.txt nbc.err "$TF" simulate "$DIR/t.tf"
  if [[ $LRC -eq 2 ]] && grep -q "MPI_Iallreduce: SMPI's replay has no nonblocking collectives" nbc.err; then
    ok "nonblocking collectives refused by name"
  else
    bad "nbc: want exit 2 naming MPI_Iallreduce, got $LRC"; show_run nbc.txt nbc.err
  fi
  limited nbc2.txt nbc2.err "$TF" simulate "$DIR/t.tf" --skip-unsupported
  if [[ $LRC -eq 0 ]] && grep -q "warning: MPI_Iallreduce not simulated" nbc2.err && grep -q "^predicted run time" nbc2.txt; then
    ok "--skip-unsupported: simulated, with a warning naming MPI_Iallreduce"
  else
    bad "nbc --skip-unsupported: exit $LRC"; show_run nbc2.txt nbc2.err
  fi
fi

# --- bad platform
printf '<?xml version="1.0"?>\n<platform version="4.1">\n  <zone id="z" routing="Full">\n    <host id="h" speed="fast"/>\n' > broken.xml
limited bad.txt bad.err "$TF" simulate "$mix" --platform broken.xml
if [[ $LRC -eq 2 ]] && grep -q "broken.xml" bad.err && grep -q "SMPI's replay failed" bad.err; then
  ok "bad platform: $(head -c 300 bad.err | tr '\n' ' ')"
else
  bad "bad platform: want exit 2 naming broken.xml, got $LRC"; show_run bad.txt bad.err
fi
limited none.txt none.err "$TF" simulate "$mix" --platform no-such.xml
[[ $LRC -eq 2 ]] && grep -q "no-such.xml" none.err || bad "missing platform: exit $LRC: $(cat none.err)"
finish
