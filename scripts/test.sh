#!/usr/bin/env bash
# Fresh Debian 12 machine -> dependencies, configure, build, whole CTest
# suite with Open MPI (in $BUILD_DIR, default build/); then a second build
# against MPICH (-DTRACEFOLD_MPI=mpich, in $MPICH_BUILD_DIR, default
# build-mpich/) and the MPI integration tests (mpi.*) again under
# mpiexec.mpich. Everything else does not depend on the MPI and runs once.
#   TRACEFOLD_TEST_MPI=openmpi   only the first part
#   TRACEFOLD_TEST_MPI=mpich     only the MPICH part
# Both parts run even when the first fails; the exit status is non-zero when
# either failed. Each step's time is printed (CI keeps the whole under 60
# minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
BUILD_DIR="${BUILD_DIR:-build}"
MPICH_BUILD_DIR="${MPICH_BUILD_DIR:-$BUILD_DIR-mpich}"
WHICH="${TRACEFOLD_TEST_MPI:-openmpi mpich}"
for w in $WHICH; do
  [[ $w == openmpi || $w == mpich ]] ||
    { echo "test.sh: TRACEFOLD_TEST_MPI names openmpi and/or mpich, not '$w'" >&2; exit 2; }
done

status=0
step() {
  local what=$1 t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "test.sh: $what: $((SECONDS - t0)) s (exit $rc)"
  return "$rc"
}

if [[ " $WHICH " == *" openmpi "* ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  step "Open MPI build" cmake --build "$BUILD_DIR" -j "$(nproc)"
  step "Open MPI: whole suite" \
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 600 || status=1
fi

if [[ " $WHICH " == *" mpich "* ]]; then
  # No unit tests, fuzzing or Google Benchmark programs: the first build has them.
  cmake -S . -B "$MPICH_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTRACEFOLD_MPI=mpich -DTRACEFOLD_TESTS_MPI_ONLY=ON -DTRACEFOLD_BUILD_BENCH=OFF
  step "MPICH build" cmake --build "$MPICH_BUILD_DIR" -j "$(nproc)"
  step "MPICH: MPI integration tests" \
    ctest --test-dir "$MPICH_BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 600 || status=1
fi
exit "$status"
