# Sourced by tests/mpi/install.sh and install_deb.sh (after
# mpi_test_lib.bash, with TF, SRC, APPS set): builds a small MPI program
# and defines check_prefix.
BUILD=$(cd "$APPS/../.." && pwd)
MPIRUN=$(command -v "${TRACEFOLD_MPIRUN:-mpirun}")
"$MPICC" -g -O1 -o "$WORK/prog" "$SRC/tests/apps/sym_c.c" || bad "$MPICC failed"

# check_prefix WHAT PREFIX: the installed tree at PREFIX records (with
# nothing else on PATH), names call sites, and builds consumers with
# find_package and pkg-config.
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
  [[ -n $(find "$prefix" -path '*/tracefold/tracefold-analyze') ]] || bad "$what: no tracefold-analyze"
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

