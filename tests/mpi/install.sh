#!/usr/bin/env bash
# Installation (README "Install"): `cmake --install` into a temporary
# prefix, then, with nothing of the build tree on PATH or in the
# environment, the installed `tracefold` records an MPI program (finding the
# installed libtracefold.so next to itself) and names its call sites; a
# small consumer builds against the installed library with
# find_package(tracefold) and with pkg-config and reads the trace. Then the
# same from the Debian package made by `cpack -G DEB`, unpacked with
# dpkg-deb -x.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
BUILD=$(cd "$APPS/../.." && pwd)
MPIRUN=$(command -v "${TRACEFOLD_MPIRUN:-mpirun}")
mpicc -g -O1 -o "$WORK/prog" "$SRC/tests/apps/sym_c.c" || bad "mpicc failed"

# check_prefix WHAT PREFIX PKG_CONFIG_ARGS...: the installed tree at PREFIX works.
check_prefix() {
  local what=$1 prefix=$2
  shift 2
  local d="$WORK/$what"
  mkdir -p "$d"
  for f in bin/tracefold include/tracefold/trace_io.hpp; do
    [[ -e $prefix/$f ]] || bad "$what: no $f"
  done
  local lib
  lib=$(find "$prefix" -name libtracefold.so | head -n 1)
  [[ -n $lib ]] || bad "$what: no libtracefold.so"
  [[ -n $(find "$prefix" -path '*/tracefold/tracefold-replay') ]] || bad "$what: no tracefold-replay"
  # Only the installed tree and the system: a clean environment.
  (cd "$d" && limited out.txt err.txt env -i PATH="$prefix/bin:/usr/bin:/bin" HOME="$d" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    tracefold record -o t.tf -- "$MPIRUN" -np 2 "$WORK/prog" 3)
  if [[ -s $d/t.tf ]] && grep -q 'sym_c: 2 ranks, 3 steps' "$d/out.txt"; then
    ok "$what: installed tracefold recorded the program"
  else
    bad "$what: record failed: $(cat "$d/out.txt" "$d/err.txt")"
    return
  fi
  env -i PATH="$prefix/bin:/usr/bin:/bin" tracefold print "$d/t.tf" >"$d/print.txt" 2>&1
  local line
  line=$(grep -n 'SYM:c_allreduce' "$SRC/tests/apps/sym_c.c" | cut -d: -f1)
  grep -qF "global_sum (sym_c.c:$line)" "$d/print.txt" && ok "$what: installed print names the call" ||
    bad "$what: print: $(head -n 20 "$d/print.txt")"
  local want
  want=$(head -n 1 "$d/print.txt" | sed -E 's/^trace of ([0-9]+) ranks, ([0-9]+) nodes.*/consumer: \1 ranks, \2 nodes/')

  # find_package(tracefold)
  if cmake -S "$SRC/tests/install" -B "$d/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$d/cmake.txt" 2>&1 && cmake --build "$d/consumer-build" >>"$d/cmake.txt" 2>&1; then
    [[ $("$d/consumer-build/consumer" "$d/t.tf") == "$want" ]] && ok "$what: find_package consumer: $want" ||
      bad "$what: find_package consumer printed $("$d/consumer-build/consumer" "$d/t.tf" 2>&1), not $want"
  else
    bad "$what: find_package consumer did not build: $(tail -n 20 "$d/cmake.txt")"
  fi
  # pkg-config
  local flags
  if flags=$(PKG_CONFIG_PATH="$(dirname "$lib")/pkgconfig" pkg-config "$@" --cflags --libs tracefold) &&
    g++ -o "$d/consumer-pc" "$SRC/tests/install/consumer.cpp" $flags 2>"$d/pc.txt"; then
    [[ $("$d/consumer-pc" "$d/t.tf") == "$want" ]] && ok "$what: pkg-config consumer: $want" ||
      bad "$what: pkg-config consumer printed $("$d/consumer-pc" "$d/t.tf" 2>&1)"
  else
    bad "$what: pkg-config consumer did not build ($flags): $(cat "$d/pc.txt")"
  fi
}

if cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.txt" 2>&1; then
  check_prefix install "$WORK/prefix"
else
  bad "cmake --install failed: $(tail -n 20 "$WORK/install.txt")"
fi

if (cd "$BUILD" && cpack -G DEB -B "$WORK/pkg" >"$WORK/cpack.txt" 2>&1); then
  deb=$(ls "$WORK"/pkg/*.deb 2>/dev/null | head -n 1)
  if [[ -n $deb ]] && dpkg-deb -x "$deb" "$WORK/root"; then
    ok "cpack: $(basename "$deb"), depends: $(dpkg-deb -f "$deb" Depends | cut -c1-80)"
    # The .pc file names /usr; the unpacked copy lies elsewhere.
    check_prefix deb "$WORK/root/usr" --define-variable=prefix="$WORK/root/usr"
  else
    bad "cpack made no package: $(tail -n 20 "$WORK/cpack.txt")"
  fi
else
  bad "cpack -G DEB failed: $(tail -n 20 "$WORK/cpack.txt")"
fi
finish
