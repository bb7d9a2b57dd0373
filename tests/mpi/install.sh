#!/usr/bin/env bash
# Installation (README "Install"): `cmake --install` into a temporary
# prefix, then, with nothing of the build tree on PATH or in the
# environment, the installed `tracefold` records an MPI program (finding the
# installed libtracefold.so next to itself) and names its call sites; a
# small consumer builds against the installed library with
# find_package(tracefold) and with pkg-config and reads the trace.
# install_deb.sh does the same with the Debian package.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/install/check_prefix.bash"

if cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.txt" 2>&1; then
  check_prefix install "$WORK/prefix"
else
  bad "cmake --install failed: $(tail -n 20 "$WORK/install.txt")"
fi
finish
