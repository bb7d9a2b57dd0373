#!/usr/bin/env bash
# Symbolized call sites (docs/cli.md, `symbolize`; docs/recording.md,
# "Modules"). C, C++ (template, inlined helper, own shared library) and
# Fortran programs built with -g are recorded; `print` and `stats` must name
# the function and the source line of each MPI call, the line taken from
# the marker comment in the source (grep -n), inlined frames included. A
# copy stripped of debug information shows symbol-table names without
# lines; a trace symbolized and then moved away from its binaries keeps its
# names; --debug-dir finds a binary by build-id; an OTF2 export of a
# symbolized trace names the functions in otf2-print; --raw-sites shows the
# recorded frames.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

line_of() { grep -n "SYM:$1\b" "$SRC/tests/apps/$2" | cut -d: -f1; }

# expect_in FILE WHAT TEXT: FILE has TEXT (fixed string).
expect_in() {
  if grep -qF -- "$3" "$1"; then ok "$2: has '$3'"; else
    bad "$2: no '$3' in $1"
    head -n 40 "$1" >&2
  fi
}

run() { # run NAME NP STEPS: records, then print/stats into $DIR
  record "$@"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$1: tracefold record exited $RC"
    show_run "$DIR/out.txt" "$DIR/err.txt"
    return 1
  fi
  "$TF" print "$DIR/t.tf" >"$DIR/print.txt" 2>&1 || bad "$1: print failed"
  "$TF" stats "$DIR/t.tf" >"$DIR/stats.txt" 2>&1 || bad "$1: stats failed"
}

# ---- C
if run sym_c 2 4; then
  # The recorder stores the module with its path and build-id.
  exe=$(readlink -f "$APPS/app_sym_c")
  id=$(LC_ALL=C readelf -n "$exe" | awk '/Build ID/{print $3}')
  expect_in "$DIR/t.tf" "C trace module table" "build-id=$id path=$exe"
  for f in print stats; do
    expect_in "$DIR/$f.txt" "C $f" "exchange_halo (sym_c.c:$(line_of c_sendrecv sym_c.c))"
    expect_in "$DIR/$f.txt" "C $f" "global_sum (sym_c.c:$(line_of c_allreduce sym_c.c))"
  done
  "$TF" print --raw-sites "$DIR/t.tf" >"$DIR/raw.txt" 2>&1
  grep -q 'MPI_Allreduce at app_sym_c+0x' "$DIR/raw.txt" && ! grep -q 'global_sum' "$DIR/raw.txt" &&
    ok "--raw-sites shows the recorded frames" || bad "--raw-sites: $(grep Allreduce "$DIR/raw.txt")"

  # Stripped of debug information: names from the symbol table, no lines.
  mkdir -p "$WORK/stripped"
  strip --strip-debug -o "$WORK/stripped/app_sym_c" "$APPS/app_sym_c"
  limited "$WORK/stripped/out.txt" "$WORK/stripped/err.txt" "$TF" record --text -o "$WORK/stripped/t.tf" \
    -- "${TRACEFOLD_MPIRUN:-mpirun}" -np 2 "$WORK/stripped/app_sym_c" 3
  "$TF" stats "$WORK/stripped/t.tf" >"$WORK/stripped/stats.txt" 2>&1
  if grep -q 'exchange_halo \[app_sym_c+0x' "$WORK/stripped/stats.txt" &&
    ! grep -q 'sym_c.c:' "$WORK/stripped/stats.txt"; then
    ok "stripped copy: symbol names, no lines"
  else
    bad "stripped copy: $(cat "$WORK/stripped/stats.txt" "$WORK/stripped/err.txt")"
  fi

  # Symbolized, then moved away from the binary (which is gone).
  mkdir -p "$WORK/moved"
  cp "$APPS/app_sym_c" "$WORK/moved/app_sym_c"
  limited "$WORK/moved/out.txt" "$WORK/moved/err.txt" "$TF" record -o "$WORK/moved/t.tf" \
    -- "${TRACEFOLD_MPIRUN:-mpirun}" -np 2 "$WORK/moved/app_sym_c" 3
  "$TF" symbolize "$WORK/moved/t.tf" -o "$WORK/sym.tf" 2>"$WORK/moved/sym.txt" ||
    bad "symbolize failed: $(cat "$WORK/moved/sym.txt")"
  mkdir -p "$WORK/debug"
  mv "$WORK/moved/app_sym_c" "$WORK/debug/renamed_binary"
  mv "$WORK/sym.tf" "$WORK/elsewhere.tf"
  "$TF" print "$WORK/elsewhere.tf" >"$WORK/moved/print.txt" 2>&1
  expect_in "$WORK/moved/print.txt" "symbolized trace, binary gone" \
    "exchange_halo (sym_c.c:$(line_of c_sendrecv sym_c.c))"
  "$TF" print "$WORK/moved/t.tf" >"$WORK/moved/unsym.txt" 2>&1
  grep -q 'exchange_halo' "$WORK/moved/unsym.txt" && bad "unsymbolized trace named a frame of a missing binary" ||
    ok "unsymbolized trace, binary gone: frames as recorded"
  # --debug-dir finds the binary by build-id, whatever its name.
  "$TF" stats --debug-dir "$WORK/debug" "$WORK/moved/t.tf" >"$WORK/moved/dd.txt" 2>&1
  expect_in "$WORK/moved/dd.txt" "--debug-dir by build-id" "global_sum (sym_c.c:$(line_of c_allreduce sym_c.c))"
  # The same in a .build-id tree.
  id=$(LC_ALL=C readelf -n "$WORK/debug/renamed_binary" | awk '/Build ID/{print $3}')
  mkdir -p "$WORK/tree/.build-id/${id:0:2}"
  mv "$WORK/debug/renamed_binary" "$WORK/tree/.build-id/${id:0:2}/${id:2}.debug"
  "$TF" stats --debug-dir "$WORK/tree" "$WORK/moved/t.tf" >"$WORK/moved/tree.txt" 2>&1
  expect_in "$WORK/moved/tree.txt" "--debug-dir .build-id layout" "global_sum (sym_c.c:$(line_of c_allreduce sym_c.c))"

  # OTF2 of the symbolized trace: region names with the functions.
  if command -v otf2-print >/dev/null; then
    "$TF" export "$WORK/elsewhere.tf" --otf2 "$WORK/otf2" 2>/dev/null || bad "export --otf2 failed"
    otf2-print -G "$WORK/otf2/traces.otf2" >"$WORK/otf2.txt" 2>&1
    expect_in "$WORK/otf2.txt" "otf2-print" "MPI_Sendrecv @ exchange_halo (sym_c.c:$(line_of c_sendrecv sym_c.c))"
  else
    bad "otf2-print is not installed (Debian: otf2-tools)"
  fi
fi

# ---- C++: template instances, an inlined helper, a shared library
if run sym_cxx 2 4; then
  l=$(line_of cxx_allreduce sym_cxx.cpp)
  for f in print stats; do
    expect_in "$DIR/$f.txt" "C++ $f" "double solver::reduce_all<double>(double) (sym_cxx.cpp:$l)"
    expect_in "$DIR/$f.txt" "C++ $f" "int solver::reduce_all<int>(int) (sym_cxx.cpp:$l)"
    expect_in "$DIR/$f.txt" "C++ $f, inlined" \
      "solver::share_value(int&) (sym_cxx.cpp:$(line_of cxx_bcast sym_cxx.cpp)) < solver::broadcast_step(int) (sym_cxx.cpp:$(line_of cxx_inlined_call sym_cxx.cpp))"
    # (MPI_Comm's type differs between MPI libraries.)
    expect_in "$DIR/$f.txt" "C++ $f, shared library" "symlib::synchronize("
    expect_in "$DIR/$f.txt" "C++ $f, shared library" "(sym_cxx_lib.cpp:$(line_of lib_barrier sym_cxx_lib.cpp))"
  done
fi

# ---- Fortran
if [[ -x $APPS/app_sym_f ]]; then
  if run sym_f 2 4; then
    for f in print stats; do
      expect_in "$DIR/$f.txt" "Fortran $f" "global_total (sym_f.f90:$(line_of f_allreduce sym_f.f90))"
    done
  fi
else
  bad "app_sym_f was not built (no MPI Fortran support?)"
fi
finish
