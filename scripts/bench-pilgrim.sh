#!/usr/bin/env bash
# Trace size next to Pilgrim's (https://github.com/pmodels/pilgrim), the
# lossless-parameters MPI tracer tracefold compares itself with:
#
#   scripts/bench-pilgrim.sh PILGRIM_SRC_DIR
#
# builds a copy of the Pilgrim source tree you give (never vendored here,
# never run in CI) in a temporary directory, then records the same test
# programs at 4, 8 and 16 ranks twice: with Pilgrim (LD_PRELOAD of its
# libpilgrim.so, default settings: aggregated timing, its smallest) and with
# `tracefold record --no-timing` (parameters only, compact form). It prints
# both sizes side by side, as written and compressed with `zstd -19`
# (Pilgrim's output files concatenated in name order).
#
# The copy is patched before building, in the copy only: Pilgrim's
# logger_get_program_start_time() lacks its `return`, and its configure.ac
# uses AX_CHECK_COMPILE_FLAG from autoconf-archive only to add -fcommon,
# which is passed in CFLAGS here instead.
#
# Needs: autoconf, automake, libtool (libtoolize), mpicc and Open MPI's
# mpirun (LD_PRELOAD is passed with -x), zstd, and a tracefold build with the
# recorder (BUILD_DIR, default build/). Settings (environment):
#   BUILD_DIR=build    NPS="4 8 16"    STEPS=50    RUN_TIMEOUT=60
#   APPS="cg lu stencil2d_periodic stencil3d sweep3d ft bt_like pop"
#   KEEP=DIR           keep the Pilgrim build and the runs in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# != 1)) || [[ ! -f $1/configure.ac || ! -f $1/src/pilgrim_logger.c ]]; then
  echo "usage: $0 PILGRIM_SRC_DIR   (a checkout of github.com/pmodels/pilgrim)" >&2
  exit 2
fi
PILGRIM_SRC=$(cd "$1" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
NPS="${NPS:-4 8 16}"
STEPS="${STEPS:-50}"
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"
APPS="${APPS:-cg lu stencil2d_periodic stencil3d sweep3d ft bt_like pop}"

for tool in autoreconf libtoolize mpicc mpirun zstd make; do
  command -v "$tool" >/dev/null || { echo "bench-pilgrim: $tool not found" >&2; exit 2; }
done
[[ -x $BUILD_DIR/src/cli/tracefold && -f $BUILD_DIR/src/record/libtracefold.so ]] ||
  { echo "bench-pilgrim: no tracefold with the recorder in $BUILD_DIR; build first" >&2; exit 2; }

if [[ -n ${KEEP:-} ]]; then
  work=$(mkdir -p "$KEEP" && cd "$KEEP" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
# Copies, so that a concurrent rebuild of BUILD_DIR cannot change them
# half-way through.
mkdir -p "$work/bin/cli" "$work/bin/record" "$work/bin/apps"
cp "$BUILD_DIR/src/cli/tracefold" "$work/bin/cli/"
cp "$BUILD_DIR/src/record/libtracefold.so" "$work/bin/record/"
cp "$BUILD_DIR"/tests/apps/app_* "$work/bin/apps/"
export TRACEFOLD_LIB="$work/bin/record/libtracefold.so"
TF="$work/bin/cli/tracefold"
APPDIR="$work/bin/apps"

# ---------------------------------------------------------------- build Pilgrim
src="$work/pilgrim"
rm -rf "$src"
mkdir -p "$src"
(cd "$PILGRIM_SRC" && tar --exclude=.git -cf - .) | (cd "$src" && tar -xf -)
python3 - "$src" <<'PY'
import re, sys
root = sys.argv[1]
p = root + "/src/pilgrim_logger.c"
s = open(p).read()
s2 = re.sub(r"(double logger_get_program_start_time\(\) \{\s*)(__logger\.local_metadata\.tstart;)",
            r"\1return \2", s)
if s2 == s and "return __logger.local_metadata.tstart;" not in s:
    sys.exit("bench-pilgrim: logger_get_program_start_time() not found as expected")
open(p, "w").write(s2)
p = root + "/configure.ac"
s = open(p).read()
s = re.sub(r"AX_CHECK_COMPILE_FLAG\(\[-fcommon\],.*?\]\)\n\]\)\n", "", s, flags=re.S)
open(p, "w").write(s)
PY
echo "bench-pilgrim: building Pilgrim in $src (log: $work/pilgrim-build.log)" >&2
if ! (cd "$src" && ./autogen.sh && CC=mpicc CFLAGS="-O2 -fcommon" ./configure --prefix="$work/pilgrim-inst" &&
  make -j2 && make install) >"$work/pilgrim-build.log" 2>&1; then
  echo "bench-pilgrim: building Pilgrim failed; the end of the log:" >&2
  tail -n 20 "$work/pilgrim-build.log" >&2
  exit 1
fi
LIBPILGRIM="$work/pilgrim-inst/lib/libpilgrim.so"
[[ -f $LIBPILGRIM ]] || { echo "bench-pilgrim: $LIBPILGRIM was not built" >&2; exit 1; }

# ---------------------------------------------------------------------- record
ROWS="$work/rows.txt"
: >"$ROWS"
zsize() { cat "$@" | zstd -19 -q -c | wc -c; }
for np in $NPS; do
  for app in $APPS; do
    exe="$APPDIR/app_$app"
    [[ -x $exe ]] || { echo "$app $np missing - - - -" >>"$ROWS"; continue; }
    d="$work/run/$app-$np"
    rm -rf "$d"
    mkdir -p "$d/pilgrim" "$d/tracefold"
    status=ok
    if ! (cd "$d/pilgrim" && timeout -k 5 "$RUN_TIMEOUT" mpirun -np "$np" -x LD_PRELOAD="$LIBPILGRIM" \
      "$exe" "$STEPS" >out.txt 2>err.txt); then
      status="pilgrim-failed"
    fi
    pfiles=()
    if [[ -d $d/pilgrim/pilgrim-logs ]]; then
      while IFS= read -r f; do pfiles+=("$f"); done < <(find "$d/pilgrim/pilgrim-logs" -type f | LC_ALL=C sort)
    fi
    ((${#pfiles[@]})) || status="pilgrim-no-output"
    if ! (cd "$d/tracefold" && timeout -k 5 "$RUN_TIMEOUT" "$TF" record --no-timing -o t.tf -- \
      mpirun -np "$np" "$exe" "$STEPS" >out.txt 2>err.txt); then
      status="${status/ok/}tracefold-failed"
    fi
    if [[ $status == ok ]]; then
      pb=$(cat "${pfiles[@]}" | wc -c)
      pz=$(zsize "${pfiles[@]}")
      tb=$(stat -c %s "$d/tracefold/t.tf")
      tz=$(zsize "$d/tracefold/t.tf")
      echo "$app $np ok $pb $pz $tb $tz" >>"$ROWS"
    else
      echo "$app $np $status - - - -" >>"$ROWS"
      # The first line that says why (an assertion, an error), not mpirun's
      # banner, from the side that failed.
      for side in pilgrim tracefold; do
        f="$d/$side/err.txt"
        [[ $status == *"$side"* && -s $f ]] || continue
        why=$(grep -m 1 -i -E 'assert|error|abort' "$f" || tail -n 1 "$f")
        echo "  $app np=$np ($side): $why" >&2
      done
    fi
    echo "  $app np=$np: $status" >&2
  done
done

echo
echo "=== Parameters-only trace size: Pilgrim (default, aggregated timing) vs tracefold record --no-timing ==="
echo "(Pilgrim: every file of pilgrim-logs/ summed; .zst: concatenated in name order, zstd -19)"
python3 - "$ROWS" "$STEPS" <<'PY'
import sys
fmt = "%-20s %5s %6s %11s %13s %13s %15s %9s %9s  %s"
print(fmt % ("program", "ranks", "steps", "pilgrim B", "pilgrim.zst B", "tracefold B",
             "tracefold.zst B", "tf/pilg", "tf/p.zst", "note"))
steps = sys.argv[2]
for line in open(sys.argv[1]):
    app, np, status, pb, pz, tb, tz = line.split()
    if status != "ok":
        print(fmt % (app, np, steps, "-", "-", "-", "-", "-", "-", status))
        continue
    pb, pz, tb, tz = int(pb), int(pz), int(tb), int(tz)
    print((fmt % (app, np, steps, pb, pz, tb, tz, "%.2f" % (tb / pb), "%.2f" % (min(tb, tz) / pz),
                  "")).rstrip())
print("tf/pilg: tracefold's file / Pilgrim's files; tf/p.zst: the smaller of tracefold's file and")
print("its zstd -19 copy / Pilgrim's files compressed (below 1: tracefold is smaller)")
PY
