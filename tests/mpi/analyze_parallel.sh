#!/usr/bin/env bash
# `mpirun -np P tracefold analyze` (one analysis rank per recorded rank,
# each reading only its own timeline) gives the same report as the serial
# `tracefold analyze`: JSON (every cell, critical path, delay costs; and
# once the text) compared byte for byte, on point-to-point (blocking, nonblocking,
# Ssend, wrong order), collective and chain programs.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"
STEPS=10

same() {
  local what=$1 np=$2 d="$WORK/$1"
  inject "$what" "$np" || return
  CHECKS=$((CHECKS + 1))
  limited "$d/par.txt" "$d/par.err" "$MPIRUN" -np "$np" "$TF" analyze "$d/t.tf" -o "$d/par.json"
  if [[ $LRC -ne 0 ]]; then
    bad "$what: parallel analysis exited $LRC"
    show_run "$d/par.err"
    return
  fi
  if ! grep -q "on $np ranks written to" "$d/par.err"; then
    bad "$what: not the parallel analysis: $(head -n 2 "$d/par.err")"
  elif ! python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["events"] > 0 and r["severity"]))' "$d/par.json"; then
    bad "$what: parallel report has no events or no severities"
  elif cmp -s "$JSON" "$d/par.json"; then
    ok "$what ($np ranks): parallel JSON identical to serial ($(wc -c <"$JSON") bytes)"
  else
    bad "$what: parallel JSON differs: $(diff "$JSON" "$d/par.json" | head -n 6)"
  fi
  [[ -z ${3:-} ]] && return
  CHECKS=$((CHECKS + 1))
  limited "$d/par-text.txt" "$d/par-text.err" "$MPIRUN" -np "$np" "$TF" analyze "$d/t.tf"
  if [[ $LRC -eq 0 ]] && cmp -s "$TEXT" "$d/par-text.txt"; then
    ok "$what: parallel text report on standard output identical"
  else
    bad "$what: text differs (exit $LRC): $(diff "$TEXT" "$d/par-text.txt" | head -n 4)"
  fi
}

# `--bundle` (each peer's records in one MPI_Alltoallv) on a recording
# `same` made: the same JSON as the serial analysis.
bundled() {
  local what=$1 np=$2 d="$WORK/$1"
  [[ -f $d/t.tf && -f $d/report.json ]] || return
  CHECKS=$((CHECKS + 1))
  limited "$d/bun.txt" "$d/bun.err" "$MPIRUN" -np "$np" "$TF" analyze "$d/t.tf" --bundle \
    -o "$d/bun.json"
  if [[ $LRC -ne 0 ]] || ! grep -q "on $np ranks written to" "$d/bun.err"; then
    bad "$what: bundled parallel analysis exited $LRC"
    show_run "$d/bun.err"
  elif cmp -s "$d/report.json" "$d/bun.json"; then
    ok "$what ($np ranks): --bundle JSON identical to serial"
  else
    bad "$what: --bundle JSON differs: $(diff "$d/report.json" "$d/bun.json" | head -n 6)"
  fi
}

# (Each mpirun costs seconds on a shared machine: the scenarios cover every
# exchange once: messages completed by Waitall, Ssend, two tags received
# out of order, a nonblocking 1-to-N collective, barriers on the world and
# N x N and scan collectives on split communicators, a 4-rank chain with
# delay costs.)
same late_sender_nb 2
same late_receiver 2
same wrong_order 2
same ibcast 3
same subcomm 4
same chain 4 text
# Bundled: the reverse records of Ssend, two tags out of order, the chain.
bundled late_receiver 2
bundled wrong_order 2
bundled chain 4
finish
