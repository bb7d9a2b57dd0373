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

# ccache: the MPICH build compiles the same commands as the first for
# everything that does not include mpi.h (core, the command, the analyses:
# 178 of its 315 compilations), so those come from the cache. Depend mode
# takes the headers from the compiler's -MD output instead of running the
# preprocessor again, so a miss costs no more than without ccache; the base
# directory makes paths relative, so the two build directories share entries
# (tracefold_core in the MPICH build: 41 of 41 from the cache, 4 s, against
# 233 s compiled in a third build directory alongside; 2 loaded cores).
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

status=0
step() {
  local what=$1 t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "test.sh: $what: $((SECONDS - t0)) s (exit $rc)"
  return "$rc"
}

if [[ " $WHICH " == *" openmpi "* ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCHER[@]}"
  step "Open MPI build" cmake --build "$BUILD_DIR" -j "$(nproc)"
  step "Open MPI: whole suite" \
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 600 || status=1
fi

if [[ " $WHICH " == *" mpich "* ]]; then
  # No unit tests, fuzzing or Google Benchmark programs: the first build has them.
  cmake -S . -B "$MPICH_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTRACEFOLD_MPI=mpich -DTRACEFOLD_TESTS_MPI_ONLY=ON -DTRACEFOLD_BUILD_BENCH=OFF "${LAUNCHER[@]}"
  step "MPICH build" cmake --build "$MPICH_BUILD_DIR" -j "$(nproc)"
  # The same tests ran under Open MPI: their times there let CTest start the
  # longest first instead of in the order they are declared, so that no
  # long test is left running alone at the end.
  costs=Testing/Temporary/CTestCostData.txt
  if [[ -f $BUILD_DIR/$costs && ! -f $MPICH_BUILD_DIR/$costs ]]; then
    mkdir -p "$MPICH_BUILD_DIR/Testing/Temporary"
    cp "$BUILD_DIR/$costs" "$MPICH_BUILD_DIR/$costs"
  fi
  # After the Open MPI part, the tests labelled one-mpi (extrapolation,
  # benchmark generation, trace size: tests/apps/CMakeLists.txt says why)
  # have run; alone, the MPICH part runs them too.
  only=()
  [[ " $WHICH " == *" openmpi "* ]] && only=(-LE one-mpi)
  step "MPICH: MPI integration tests" \
    ctest --test-dir "$MPICH_BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 600 \
      "${only[@]}" || status=1
fi
exit "$status"
