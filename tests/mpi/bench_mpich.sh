#!/usr/bin/env bash
# Benchmark generation under MPICH (the other bench_programs*.sh scripts use
# the MPI the project is built for, Open MPI by default). A subset of the
# test programs -- a ring, a 2-D stencil, both wildcard programs (lu,
# master_worker), persistent requests, a derived datatype and a Fortran
# program -- is compiled with MPICH's own wrappers, recorded under
# mpiexec.mpich (record picks libtracefold-mpich.so, TRACEFOLD_MPI_FLAVOURS),
# generated, compiled with MPICH's `mpicc -std=c11 -Wall -Wextra -Werror`,
# run and recorded under mpiexec.mpich again, and the two traces compared
# with `diff --ignore-callsites` (and `--resolved` where the program has
# wildcard receives: the benchmark names the sources they matched).
# Both MPIs are installed by scripts/install-deps.sh: a missing one fails.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
CC=mpicc.mpich FC=mpif90.mpich RUN=mpiexec.mpich
for tool in $CC $FC $RUN; do
  command -v "$tool" >/dev/null ||
    { bad "$tool not found: install MPICH (scripts/install-deps.sh: libmpich-dev mpich)"; finish; }
done
LIBDIR=$(cd "$(dirname "$TF")/../record" && pwd)
if ! readelf -d "$LIBDIR/libtracefold.so" | grep -q 'NEEDED.*libmpich' &&
  [[ ! -e $LIBDIR/libtracefold-mpich.so ]]; then
  bad "no recorder for MPICH next to $LIBDIR/libtracefold.so (TRACEFOLD_MPI_FLAVOURS must name mpich)"
  finish
fi

# Entries: name source [compile definitions] | ranks steps [diff options]
PROGRAMS=(
  "ring ring.c | 4 10"
  "stencil2d stencil2d.c -DPERIODIC=1 | 4 10"
  "lu lu.c | 4 4 --resolved"
  "master_worker master_worker.c | 4 10 --resolved"
  "persistent persistent.c | 4 10"
  "dtype_reuse dtype_reuse.c | 2 4"
  "stencil_mpif stencil_mpif.f90 | 4 10"
)

mpich_one() {
  local build=${1%%|*} run=${1#*|}
  # shellcheck disable=SC2086
  set -- $build
  local name=$1 src=$2
  shift 2
  local defs=("$@")
  # shellcheck disable=SC2086
  set -- $run
  local np=$1 steps=$2
  shift 2
  local what="$name under MPICH at $np ranks" d="$WORK/$name" t0=$SECONDS
  CHECKS=$((CHECKS + 1))
  mkdir -p "$d"
  local cc=$CC
  [[ $src == *.f90 ]] && cc=$FC
  if ! $cc -O1 "${defs[@]}" -I"$SRC/tests/apps" "$SRC/tests/apps/$src" -o "$d/app" -lm 2>"$d/cc0.err"; then
    bad "$what: $cc could not build the program: $(head -c 400 "$d/cc0.err")"
    return 0
  fi
  limited "$d/out.txt" "$d/err.txt" "$TF" record -o "$d/t.tf" -- "$RUN" -n "$np" "$d/app" "$steps"
  if [[ $LRC -ne 0 || ! -s $d/t.tf ]]; then
    bad "$what: recording the program failed ($LRC)"
    show_run "$d/out.txt" "$d/err.txt"
    return 0
  fi
  if ! "$TF" bench "$d/t.tf" -o "$d/bench.c" 2>"$d/gen.err"; then
    bad "$what: tracefold bench failed: $(cat "$d/gen.err")"
    return 0
  fi
  if grep -q 'MPI_ANY_SOURCE' "$d/bench.c"; then
    bad "$what: the benchmark still receives from MPI_ANY_SOURCE"
  fi
  if ! $CC -std=c11 -Wall -Wextra -Werror -O1 "$d/bench.c" -o "$d/bench" 2>"$d/cc.err"; then
    bad "$what: the benchmark does not compile cleanly with $CC"
    head -n 20 "$d/cc.err" >&2
    return 0
  fi
  limited "$d/bout.txt" "$d/berr.txt" "$TF" record -o "$d/b.tf" -- "$RUN" -n "$np" "$d/bench"
  if [[ $LRC -ne 0 || ! -s $d/b.tf ]]; then
    bad "$what: running the benchmark under the recorder failed ($LRC)"
    show_run "$d/bout.txt" "$d/berr.txt"
    return 0
  fi
  grep -q "^bench: $np ranks, wall time" "$d/bout.txt" || bad "$what: the benchmark printed no wall time"
  local out rc=0
  out=$("$TF" diff --ignore-callsites "$@" "$d/t.tf" "$d/b.tf" 2>&1) || rc=$?
  if [[ $rc -ne 0 ]]; then
    bad "$what: the benchmark's trace differs from the program's ($*): $(head -c 600 <<<"$out")"
    return 0
  fi
  ok "$what: same calls on every rank ($out${*:+; $*}), $((SECONDS - t0)) s"
}

for p in "${PROGRAMS[@]}"; do
  mpich_one "$p"
done
finish
