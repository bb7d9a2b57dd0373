#!/usr/bin/env bash
# Replay fixed point (seed 000, Exp3) and call/byte counts, for every test
# program: record the program (T0), record the replay of T0 (T1), record the
# replay of T1 (T2). T0 ~ T1 and T1 ~ T2 must hold under
# `tracefold diff --ignore-callsites` (the replayer's call sites differ from
# the program's). Programs whose wildcard matches depend on timing are
# compared with --ignore-matched as well, and only those; poll outcomes are
# always compared (the replay forces them). Not here: threads (a serialized
# MPI_THREAD_MULTIPLE trace replayed on one thread can deadlock; thread ids
# are not recorded) and abort. Per rank and operation, the number of calls
# and the bytes sent in T1 must equal T0's.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# calls and bytes per operation of one rank: "op calls bytes" lines
counts() {
  "$TF" expand "$1" -r "$2" | awk '
    /^(site|rank|comm) / { next }
    { c = 0; d = 0; n[$1]++
      for (i = 2; i <= NF; i++) { if ($i ~ /^count=/) c = substr($i, 7); if ($i ~ /^dsize=/) d = substr($i, 7) }
      if ($1 ~ /send|Send|Bcast|reduce|Reduce|gather|Gather|scatter|Scatter|alltoall|Alltoall|scan|Scan/) b[$1] += c * d }
    END { for (o in n) print o, n[o], b[o] + 0 }' | sort
}

fixed_point() {
  local name=$1 np=$2 steps=$3 relax=${4:-}
  local what="$name at $np ranks"
  CHECKS=$((CHECKS + 1))
  local dir="$WORK/fp-$name"
  mkdir -p "$dir"
  limited "$dir/t0.out" "$dir/t0.err" "$TF" record -o "$dir/t0.tf" -- "$MPIRUN" -np "$np" "$APPS/app_$name" "$steps"
  if [[ $LRC -ne 0 || ! -s $dir/t0.tf ]]; then
    bad "$what: recording the program failed ($LRC)"; show_run "$dir/t0.err"; return 0
  fi
  local i prev=t0
  for i in 1 2; do
    limited "$dir/t$i.out" "$dir/t$i.err" "$TF" record -o "$dir/t$i.tf" -- "$MPIRUN" -np "$np" "$TF" replay "$dir/$prev.tf"
    if [[ $LRC -ne 0 || ! -s $dir/t$i.tf ]]; then
      bad "$what: recording replay $i failed ($LRC)"; show_run "$dir/t$i.out" "$dir/t$i.err"; return 0
    fi
    if ! grep -Eq "^replay: $np ranks, wall [0-9.]+ s, [0-9]+ MPI calls, [0-9]+ bytes sent" "$dir/t$i.out"; then
      bad "$what: replay $i printed no summary line"; show_run "$dir/t$i.out"; return 0
    fi
    local d drc=0
    # shellcheck disable=SC2086
    d=$("$TF" diff --ignore-callsites $relax "$dir/$prev.tf" "$dir/t$i.tf" 2>&1) || drc=$?
    if [[ $drc -ne 0 ]]; then
      bad "$what: $prev vs t$i: $d"; return 0
    fi
    prev=t$i
  done
  local r
  for ((r = 0; r < np; r++)); do
    if ! diff <(counts "$dir/t0.tf" $r) <(counts "$dir/t1.tf" $r) >"$dir/counts.diff"; then
      bad "$what: rank $r calls/bytes per operation differ between the program and its replay"
      head -n 10 "$dir/counts.diff" >&2
      return 0
    fi
  done
  ok "$what: fixed point${relax:+ ($relax)}, counts equal on $np ranks ($(grep -o '[0-9]* MPI calls' "$dir/t1.out"))"
}

fixed_point ring 4 20
fixed_point stencil2d_periodic 4 6
fixed_point stencil2d_nonperiodic 6 4
fixed_point stencil3d 8 3
fixed_point sweep3d 4 2
fixed_point cg 4 3
fixed_point ft 4 3
fixed_point pop 4 6
fixed_point comms 4 3
fixed_point persistent 4 5
fixed_point bt_like 4 3
fixed_point comm_null 4 3
fixed_point comm_self 4 3
fixed_point stencil_cxx 4 3
fixed_point stencil_mpif 4 3
fixed_point collectives_usempi 4 3
fixed_point intercomm 4 5
fixed_point halo26_periodic 8 3
fixed_point mg_vcycle 4 2
fixed_point topo_nbr 4 3
fixed_point graph_usempi 4 5
# Every derived datatype constructor and decoder, types freed and made
# again: the replay's types get the original's ids.
fixed_point dtypes 4 3
fixed_point dtypes_usempi 3 3
# Polling loops (Test, Testany, Testsome, Testall, Iprobe) and Waitany /
# Waitsome are replayed with their recorded outcomes, so how many polls found
# nothing and which request each call completed are compared as they are.
# Only which sender a wildcard receive matched (src, mtag, srcs, mtags) is
# left out: it depends on which message arrives first, and `tracefold
# replay` keeps wildcards as wildcards (--deterministic would name the
# sources, which a recording then shows as other peers).
MATCHED="--ignore-matched"
fixed_point polling 4 4 "$MATCHED"
fixed_point nbc 4 5
fixed_point lu 4 3 "$MATCHED"
fixed_point master_worker 3 8 "$MATCHED"
fixed_point request_links 4 3 "$MATCHED"
fixed_point misc_p2p 4 3 "$MATCHED"
fixed_point amg_like 4 3 "$MATCHED"
# A data exchange whose probes, tests and arrival order differ every round.
fixed_point exchange_setup 4 6 "$MATCHED"
finish
