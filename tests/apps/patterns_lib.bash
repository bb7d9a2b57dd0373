# Helpers sourced by tests/mpi/patterns_shapes_*.sh (not a test itself).
# The caller passes its arguments: $1 tracefold binary, $2 source tree, $3
# the built app_* programs. Makes a scratch directory (removed on exit) and
# cds into it.
#
#   shapes NAME NP STEPS [ARG...]
#                          record app_NAME STEPS ARG... at NP ranks into NAME-NP.tf,
#                          list its patterns in NAME-NP.txt, show the global part
#   thread_patterns NAME [ARG...]
#                          record app_thread_patterns 4 ARG... at 4 ranks into
#                          NAME.tf; exits 77 (not run) without MPI_THREAD_MULTIPLE
#   expect FILE LINE       FILE holds LINE, exactly, at least once
#   fail MESSAGE           report and exit 1
set -euo pipefail
TF=$1
APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# shapes NAME NP STEPS [ARG...]: records app_NAME at NP ranks, lists its
# patterns in NAME-NP.txt and shows their global part.
shapes() {
  local name=$1 np=$2 steps=$3
  "$TF" record -o "$name-$np.tf" -- "$MPIRUN" -np "$np" "$APPS/app_$name" "$steps" "${@:4}" \
    > /dev/null 2> "$name-$np.err" || { cat "$name-$np.err" >&2; fail "record $name at $np ranks"; }
  "$TF" patterns "$name-$np.tf" > "$name-$np.txt" || fail "patterns $name at $np ranks"
  echo "== $name at $np ranks"
  sed -n '/^global patterns/,$p' "$name-$np.txt" | cut -c1-200
}
# expect FILE LINE: the listing holds LINE, exactly, at least once.
# thread_patterns NAME ARG...: app_thread_patterns 4 ARG... at 4 ranks into
# NAME.tf; exits 77 (not run) without MPI_THREAD_MULTIPLE.
thread_patterns() {
  local name=$1
  "$TF" record -o "$name.tf" -- "$MPIRUN" -np 4 "$APPS/app_thread_patterns" 4 "${@:2}" \
    > "$name.out" 2> "$name.err" || { cat "$name.err" >&2; fail "record $name"; }
  if grep -q "not provided" "$name.out"; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE: not run"
    exit 77
  fi
}
expect() { grep -qxF -- "$2" "$1" || fail "$1: no line '$2'"; }
