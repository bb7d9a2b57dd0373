# Helpers sourced by tests/memtrace/*.sh (not a test itself). The caller sets
#   TFM=$1 (the tracefold-mem wrapper from the build), SRC=$2 (source tree),
#   K=$3 (directory of the built kernels)
# and sources this file; it makes $WORK (removed on exit) and cds into it.
#   tfm OUT ERR ARGS...   runs the tool (limited to $RUN_TIMEOUT s) -> $RC
#   sym BIN NAME          "START END" of function NAME in BIN (nm -S, no PIE)
#   image_range BIN       "LO HI" covering BIN's loaded segments (no PIE)
#   rawcount ...          python3 rawcount.py (reads the raw streams)
#   ok / bad / finish     as in tests/apps/mpi_test_lib.bash
set -euo pipefail
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
FAILURES=()

bad() {
  FAILURES+=("$*")
  echo "FAIL: $*" >&2
}
ok() { echo "ok: $*"; }
finish() {
  if ((${#FAILURES[@]})); then
    echo "${#FAILURES[@]} check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}

if [[ ! -x $TFM ]]; then
  echo "FAIL: the tracefold-mem Valgrind tool was not built ($TFM): install the Debian" \
    "package valgrind (scripts/install-deps.sh does) and re-run cmake" >&2
  exit 1
fi
command -v python3 >/dev/null || { echo "FAIL: python3 not found" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

tfm() {
  local out=$1 err=$2
  shift 2
  RC=0
  timeout "$RUN_TIMEOUT" "$TFM" "$@" >"$out" 2>"$err" || RC=$?
}

sym() {
  local addr size type name
  while read -r addr size type name; do
    if [[ $name == "$2" && ($type == T || $type == t) ]]; then
      echo "$((16#$addr)) $((16#$addr + 16#$size))"
      return 0
    fi
  done < <(nm -S "$1")
  echo "FAIL: no function $2 in $1" >&2
  return 1
}

# image_range BIN: "LO HI" spanning BIN's PT_LOAD segments (not PIE).
image_range() {
  readelf -lW "$1" | awk '$1 == "LOAD" { print $3, $6 }' |
    while read -r va msz; do echo "$((va)) $((va + msz))"; done |
    sort -n | awk 'NR == 1 { lo = $1 } { hi = $2 } END { print lo, hi }'
}

rawcount() { python3 "$SRC/tests/memtrace/rawcount.py" "$@"; }
