# Shared set-up of the benchmark scripts that record every test program.
# Sourced, not run.
#
# bench_copy_build NAME: checks BUILD_DIR's tracefold and recorder library,
# copies them and the test programs (app_* except abort and crash, which end
# on purpose and leave partial traces; only names matching APPS_FILTER) to a
# temporary folder, so a concurrent rebuild of BUILD_DIR cannot change them
# half-way through a run. Sets: work (the folder, removed on exit), TF,
# TRACEFOLD_LIB (exported) and apps (the programs' names).
bench_copy_build() {
  local name=$1 f a n
  for f in "$BUILD_DIR/src/cli/tracefold" "$BUILD_DIR/src/record/libtracefold.so"; do
    [[ -x $f ]] || { echo "$name: $f missing; build first (cmake --build $BUILD_DIR)" >&2; exit 2; }
  done
  command -v zstd >/dev/null || { echo "$name: zstd not found" >&2; exit 2; }
  command -v mpirun >/dev/null || { echo "$name: mpirun not found" >&2; exit 2; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/bin/cli" "$work/bin/record" "$work/bin/apps"
  cp "$BUILD_DIR/src/cli/tracefold" "$work/bin/cli/"
  cp "$BUILD_DIR/src/record/libtracefold.so" "$work/bin/record/"
  export TRACEFOLD_LIB="$work/bin/record/libtracefold.so"
  TF="$work/bin/cli/tracefold"
  apps=()
  for a in "$BUILD_DIR"/tests/apps/app_*; do
    n=${a##*/app_}
    [[ -f $a && -x $a && $n != abort && $n != crash && $n =~ ${APPS_FILTER:-.} ]] || continue
    cp "$a" "$work/bin/apps/"
    apps+=("$n")
  done
  ((${#apps[@]})) || { echo "$name: no test programs in $BUILD_DIR/tests/apps" >&2; exit 2; }
}
