#!/usr/bin/env bash
# Parametric benchmarks (tracefold bench --parametric): one program from
# traces at 4, 9 and 16 ranks of the 2-D stencils runs at 4, 9, 16 and 25
# ranks and each run's trace equals the real program's at that count
# (diff --ignore-callsites: same on every rank); 8 ranks are refused with a
# clear message and a non-zero exit, unless the grid is given (`4 2`).
# Parts seen at one size: strong2d and the non-periodic stencil from 4, 6,
# 9 ranks run at 12.
# Second shape: the 1-D ring (3, 4, 5 -> 6). Also the refusal of too few
# inputs (nothing written).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
STEPS=12

# rec APP NP OUT: records app_APP at NP ranks into OUT.
rec() {
  limited "rec-$3.out" "rec-$3.err" "$TF" record -o "$3" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$2" "$APPS/app_$1" "$STEPS"
  if [[ $LRC -ne 0 || ! -s $3 ]]; then
    bad "record $1 at $2 ranks: exit $LRC"
    show_run "rec-$3.out" "rec-$3.err"
  fi
}

# generate NAME INPUTS...: NAME.c from the inputs, compiled to NAME.
generate() {
  local name=$1
  shift
  CHECKS=$((CHECKS + 1))
  if ! "$TF" bench --parametric "$@" -o "$name.c" 2>"$name.gen-err"; then
    bad "$name: tracefold bench --parametric failed: $(cat "$name.gen-err")"
    return 1
  fi
  if ! "$MPICC" -std=c11 -Wall -Wextra -Werror -O1 "$name.c" -o "$name" 2>"$name.cc-err"; then
    bad "$name: the parametric benchmark does not compile cleanly"
    head -n 20 "$name.cc-err" >&2
    return 1
  fi
  ok "$name: generated from $* and compiled ($(wc -l <"$name.c") lines)"
}

# same_at NAME APP NP [GRID...]: the benchmark NAME at NP ranks (given
# the grid GRID, slowest first, if any), recorded, against the real
# program's trace at NP (recorded here unless it exists).
same_at() {
  local name=$1 app=$2 np=$3
  shift 3
  CHECKS=$((CHECKS + 1))
  [[ -s $app-$np.tf ]] || rec "$app" "$np" "$app-$np.tf"
  limited "$name-$np.out" "$name-$np.err" "$TF" record -o "$name-$np.tf" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "./$name" "$@"
  if [[ $LRC -ne 0 || ! -s $name-$np.tf ]]; then
    bad "$name at $np ranks: the run failed ($LRC)"
    show_run "$name-$np.out" "$name-$np.err"
    return 0
  fi
  grep -q "^bench: $np ranks (grid" "$name-$np.out" || bad "$name at $np ranks: no wall time printed"
  local d drc=0
  d=$("$TF" diff --ignore-callsites "$app-$np.tf" "$name-$np.tf" 2>&1) || drc=$?
  if [[ $drc -ne 0 || $d != "same: $np ranks" ]]; then
    bad "$name at $np ranks: the trace differs from the program's: $(head -c 600 <<<"$d")"
  else
    ok "$name at $np ranks: $d"
  fi
}

# refused NAME NP PATTERN: the run exits non-zero saying PATTERN.
refused() {
  local name=$1 np=$2 pattern=$3
  CHECKS=$((CHECKS + 1))
  limited "$name-$np.out" "$name-$np.err" "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "./$name"
  if [[ $LRC -eq 0 ]]; then
    bad "$name at $np ranks: ran, should have been refused"
  elif ! grep -q "$pattern" "$name-$np.err"; then
    bad "$name at $np ranks: exit $LRC without the message '$pattern': $(head -c 400 "$name-$np.err")"
  else
    ok "$name at $np ranks: refused (exit $LRC): $(grep -m1 "$pattern" "$name-$np.err")"
  fi
}

# The non-periodic grid has all nine kinds of rank (corners, edges,
# interior): every count; the periodic one at a count it was not made from.
# (Each mpirun costs seconds here: runs are kept few.)
for v in nonperiodic periodic; do
  app=stencil2d_$v
  for n in 4 9 16; do rec "$app" "$n" "$app-$n.tf"; done
  if generate "p_$v" "$app-4.tf" "$app-9.tf" "$app-16.tf"; then
    counts="25"
    [[ $v == nonperiodic ]] && counts="4 9 16 25"
    for n in $counts; do same_at "p_$v" "$app" "$n"; done
    refused "p_$v" 8 "bench: needs a square number of ranks .*, got 8"
  fi
done
# 8 ranks with the grid named, as MPI_Dims_create gives the program its 4x2.
same_at p_nonperiodic stencil2d_nonperiodic 8 4 2

# Parts of the grid seen at one size: 4 (2x2), 6 (3x2) and 9 (3x3) ranks
# show the middle column at 9 only. strong2d (a fixed 720x360 domain over
# MPI_Dims_create's grid) sends 360/rows values west and east there: the
# law the corners show, 90 at 12 ranks (4x3); a constant 120 was written
# before (the run stopped with MPI_ERR_TRUNCATE). The non-periodic stencil
# on the same counts keeps working (its numbers there are constants and
# grid offsets).
for n in 4 6 9; do rec strong2d "$n" "strong2d-$n.tf"; done
if generate p_strong2d strong2d-4.tf strong2d-6.tf strong2d-9.tf; then
  same_at p_strong2d strong2d 12
fi
rec stencil2d_nonperiodic 6 stencil2d_nonperiodic-6.tf
if generate p_np469 stencil2d_nonperiodic-4.tf stencil2d_nonperiodic-6.tf \
  stencil2d_nonperiodic-9.tf; then
  same_at p_np469 stencil2d_nonperiodic 12
fi

# Rank groups and peers are expressions in the grid: the corner, edge and
# interior parts of the non-periodic grid, and peers by coordinate offset.
CHECKS=$((CHECKS + 1))
if grep -q "x1 == 0 && x2 == 0" p_nonperiodic.c && grep -q "x1 > 0 && x1 < S1 - 1" p_nonperiodic.c &&
  grep -q "peer_at(0, -1, 0)" p_periodic.c && ! grep -Eq "rank (% [0-9]|== [1-9])" p_nonperiodic.c; then
  ok "rank groups are predicates on the grid coordinates, peers coordinate offsets"
else
  bad "the generated code does not read as expected: $(grep -m3 'if (' p_nonperiodic.c)"
fi

# The 1-D ring: any rank count of at least 2.
for n in 3 4 5; do rec ring "$n" "ring-$n.tf"; done
if generate p_ring ring-3.tf ring-4.tf ring-5.tf; then
  same_at p_ring ring 6
fi

# Too few inputs for a 2-D grid: an error, and no file.
CHECKS=$((CHECKS + 1))
rc=0
"$TF" bench --parametric stencil2d_periodic-9.tf stencil2d_periodic-16.tf -o few.c 2>few.err || rc=$?
if [[ $rc -ne 0 ]] && grep -q "needs traces of at least 3 rank counts" few.err && [[ ! -e few.c ]]; then
  ok "two inputs for a 2-D grid: $(cat few.err)"
else
  bad "two inputs for a 2-D grid: exit $rc, $(cat few.err), file: $(ls few.c* 2>/dev/null)"
fi
finish
