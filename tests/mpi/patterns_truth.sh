#!/usr/bin/env bash
# tracefold patterns --truth on the project's programs: each is recorded at
# a few ranks for a few steps and compared with its truth file
# (tests/mpi/patterns_truth/NAME-NP.truth, what the program's source does).
# The bars are those of issue 32 -- precision >= 90 %, recall >= 95 %,
# naming 100 %, coverage 100 % -- where the analysis reaches them; where it
# does not, the figures it reaches are asserted as they are (and say what
# is missing), so that a change either way shows. A bad truth file stops
# the command with exit code 2 and names its file and line.
source "$2/tests/apps/patterns_lib.bash"
TRUTH=$2/tests/mpi/patterns_truth

# judge NAME NP STEPS [ARG...]: records app_NAME (shapes), compares it with
# NAME-NP.truth in NAME-NP.truth.txt and NAME-NP.json, shows the figures.
judge() {
  local name=$1 np=$2 steps=$3
  shapes "$name" "$np" "$steps" "${@:4}" > /dev/null
  "$TF" patterns --truth "$TRUTH/$name-$np.truth" "$name-$np.tf" > "$name-$np.truth.txt" ||
    fail "patterns --truth $name at $np ranks"
  "$TF" patterns --json --truth "$TRUTH/$name-$np.truth" "$name-$np.tf" > "$name-$np.json" ||
    fail "patterns --json --truth $name at $np ranks"
  echo "== $name at $np ranks"
  sed -n '/^truth /,$p' "$name-$np.truth.txt" | cut -c1-200
}

# figures NAME-NP CONDITION...: each CONDITION (`precision >= 0.9`,
# `recall == 0.5`, `in_several > 0`) holds for the JSON form's truth
# figures (== to 4 decimals).
figures() {
  python3 - "$1.json" "${@:2}" <<'PY' || fail "$1: figures"
import json, sys
t = json.load(open(sys.argv[1]))["truth"]
for cond in sys.argv[2:]:
    key, op, value = cond.split()
    have, want = t[key], float(value)
    ok = {">=": have >= want - 1e-9, "==": abs(have - want) < 1e-4,
          ">": have > want, "<": have < want}[op]
    if not ok:
        sys.exit(f"{sys.argv[1]}: {key} is {have}, expected {op} {want}")
PY
}

# The issue's bars.
bars() { figures "$1" 'precision >= 0.9' 'recall >= 0.95' 'naming == 1' 'coverage == 1'; }

# Found, named and covered in full: one pattern each, the programs' single
# collectives listed as singletons.
judge ring 5 3
bars ring-5
expect ring-5.truth.txt '  ring = G1: ranks 0–4, overlap 100.0%, ring, named, roles agree'
judge stencil2d_nonperiodic 6 3
bars stencil2d_nonperiodic-6
judge stencil2d_periodic 6 3
bars stencil2d_periodic-6
judge stencil2d_periodic 9 3
bars stencil2d_periodic-9
judge halo26 8 3
bars halo26-8
judge sweep3d 4 2
bars sweep3d-4
judge pipeline 4 3
bars pipeline-4
expect pipeline-4.truth.txt \
  '  stream = G1: ranks 0–3, overlap 100.0%, pipeline, named, occurrences 3, roles agree'
expect sweep3d-4.truth.txt \
  '  sweeps = G1: ranks 0–3, overlap 100.0%, wavefront, named, occurrences 2'

# stencil3d's steps with and without the residual Allreduce are two
# per-process repeats that overlap: one global pattern, the halo.
judge stencil3d 8 6
bars stencil3d-8
judge ring_allreduce 4 3
bars ring_allreduce-4

# cg's row exchanges and its transpose share one loop in main: one
# per-process repeat, one global pattern, whose union of edges fits a 1-D
# halo; its tags split it into the two phases (split_phases).
judge cg 4 2
bars cg-4
expect cg-4.truth.txt '  row = G1: ranks 0–3, overlap 100.0%, pairwise, named'
expect cg-4.truth.txt '  transpose = G2: ranks 0–3, overlap 100.0%, transpose, named'
# mg_vcycle's halo on the way down and on the way up are two repeats of
# give() that make the same messages: one pattern; the coarse level's
# Allreduce joins the ranks of its communicator: one collective pattern.
judge mg_vcycle 4 2
bars mg_vcycle-4
expect mg_vcycle-4.truth.txt '  coarse = G2: ranks 0–3, overlap 100.0%, collective, named, roles agree'
# ft is collectives only: one pattern of the four ranks' Alltoall and
# Allreduce.
judge ft 4 3
bars ft-4

# master_worker: which worker gets which task follows the run's timing.
# With 3000 work units a task the workers share them; a worker's exchanges
# outside its repeats (a task or two) join the farm through the master's
# patterns, which make the same messages.
judge master_worker 4 24 3000
bars master_worker-4
expect master_worker-4.truth.txt '  farm = G1: ranks 0–3, overlap 100.0%, master-worker, named'

# sweep_fn: one function per sweep direction, each a context: four
# wavefronts, and main's order of them a composition. Without contexts the
# four are one repeat of the whole step: measurably worse.
judge sweep_fn 6 2
bars sweep_fn-6
expect sweep_fn-6.truth.txt '  step = G5: ranks 0–5, overlap 100.0%, composition, named'
"$TF" patterns --no-context --json --truth "$TRUTH/sweep_fn-6.truth" sweep_fn-6.tf > sweep_fn-6-nc.json
figures sweep_fn-6-nc 'recall < 0.5'
judge sweep_fn 12 2
bars sweep_fn-12

# amg_like on 16 ranks: sparse, symmetric, irregular neighbour sets; the
# residual Allreduce lies in the repeats of some ranks only (timing).
judge amg_like 16 2
bars amg_like-16
expect amg_like-16.truth.txt '  vcycle = G1: ranks 0–15, overlap 100.0%, irregular neighbourhood, named'

# lu: sweeps with blocking wildcard receives, then a halo of posted
# MPI_ANY_SOURCE receives whose sources only their MPI_Wait records, over
# the same grid edges in one loop of main: told apart by receive mode.
judge lu 4 2
bars lu-4
expect lu-4.truth.txt '  halo = G2: ranks 0–3, overlap 100.0%, 2-D halo, named'
judge lu 6 2
bars lu-6
expect lu-6.truth.txt '  sweeps = G1: ranks 0–5, overlap 100.0%, wavefront, named'
expect lu-6.truth.txt '  halo = G2: ranks 0–5, overlap 100.0%, 2-D halo, named'

# nbr_halo: a 2-D halo made by neighbourhood collectives on a Cartesian
# communicator, no point-to-point call: the dims and periods recorded at
# MPI_Cart_create give each rank's neighbours, and the halo is fitted on
# them as on a point-to-point one.
judge nbr_halo 6 2
bars nbr_halo-6
expect nbr_halo-6.truth.txt '  halo = G1: ranks 0–5, overlap 100.0%, 2-D halo, named, roles agree'

# A bad truth file: exit code 2, its name and line in the message.
printf 'pattern a\n  ranks 0-4\n  shape: ring\n' > bad.truth
rc=0
"$TF" patterns --truth bad.truth ring-5.tf > /dev/null 2> bad.err || rc=$?
[[ $rc -eq 2 ]] || fail "a bad truth file exited $rc, not 2"
grep -q "^tracefold: error: bad.truth:3: unknown keyword 'shape:' in pattern 'a'" bad.err ||
  fail "the error should name bad.truth:3: $(cat bad.err)"
echo "ok"
