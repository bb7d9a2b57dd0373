#!/usr/bin/env bash
# Installs every Debian package the build, tests and benchmarks need (idempotent).
set -euo pipefail
PACKAGES=(g++ cmake ninja-build pkg-config libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev libzstd-dev zstd
          python3 gfortran libopenmpi-dev openmpi-bin libunwind-dev
          libotf2-trace-dev otf2-tools zlib1g-dev chromium clang-format
          libsimgrid-dev time libdw-dev dpkg-dev file clang-16 libclang-rt-16-dev
          libxml2-utils tar valgrind ccache gdb
          libmpich-dev mpich)
# MPICH next to Open MPI: the recorder is also built for it
# (libtracefold-mpich.so, TRACEFOLD_MPI_FLAVOURS) and mpi.mpi_mismatch runs
# a program of each MPI. Open MPI stays the default mpicc/mpirun (its
# alternatives' priority is higher).
# gdb: a test run that hangs has its processes' stacks dumped before it is
# killed (tests/apps/mpi_test_lib.bash, limited).
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
