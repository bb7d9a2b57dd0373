# Helpers sourced by tests/cli/*.sh (not a test itself).
#   source "$SRC/tests/data/cli_common.bash"
# Expects TRACEFOLD (the binary) to be set by the caller.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_expect CODE CMD... : runs CMD, stores stdout/stderr in $OUT/$ERR, and
# fails unless it exits with CODE.
run_expect() {
  local want=$1
  shift
  local rc=0
  "$@" >"$WORK/.out" 2>"$WORK/.err" || rc=$?
  OUT=$(cat "$WORK/.out")
  ERR=$(cat "$WORK/.err")
  if [[ $rc -ne $want ]]; then
    echo "--- stdout:" >&2
    echo "$OUT" | head -40 >&2
    echo "--- stderr:" >&2
    echo "$ERR" | head -40 >&2
    fail "'$*' exited $rc, expected $want"
  fi
}

# expect_in TEXT NEEDLE WHAT : fails unless TEXT contains NEEDLE.
expect_in() {
  if [[ "$1" != *"$2"* ]]; then
    echo "--- text:" >&2
    echo "$1" | head -40 >&2
    fail "$3: expected to find '$2'"
  fi
}

# gen_logs DIR [STEPS] : a 4-rank ring program with loops, written as raw logs
# DIR/rank-R.txt. Each step every rank receives from its left and sends to its
# right neighbour and waits for both; every 5th step ends with an Allreduce;
# rank 0 finishes with a Bcast. Site ids are declared as 11..15 (they are not
# dense on purpose: folded traces renumber them).
gen_logs() {
  local dir=$1 steps=${2:-20} r s
  mkdir -p "$dir"
  for r in 0 1 2 3; do
    {
      echo "# ring program, rank $r"
      echo "rank $r size 4"
      echo "site 11 ring+0x1a0 main+0x40"
      echo "site 12 ring+0x1f0 main+0x40"
      echo "site 13 ring+0x230 main+0x40"
      echo "site 14 ring+0x2c8 main+0x58"
      echo "site 15 ring+0x310 main+0x70"
      for ((s = 0; s < steps; s++)); do
        echo "MPI_Irecv site=11 peer=$(((r + 3) % 4)) tag=7 count=$((16 + 16 * (s % 2))) dsize=8 comm=0 compute_ns=$((100 + r)) comm_ns=20"
        echo "MPI_Isend site=12 peer=$(((r + 1) % 4)) tag=7 count=$((16 + 16 * (s % 2))) dsize=8 comm=0 compute_ns=5 comm_ns=30"
        echo "MPI_Waitall site=13 req=2 links=[2,1] compute_ns=5 comm_ns=$((40 + s))"
        if ((s % 5 == 4)); then
          echo "MPI_Allreduce site=14 count=1 dsize=8 comm=0 redop=1 compute_ns=7 comm_ns=9"
        fi
      done
      if ((r == 0)); then echo "MPI_Bcast site=15 count=4 dsize=4 comm=0 root=0"; fi
    } >"$dir/rank-$r.txt"
  done
}

# event_lines FILE : the event lines of a raw log with site=ID and timings
# removed (declarations, comments and blank lines dropped).
event_lines() {
  grep -E '^MPI_|^(compute|enter|exit) ' "$1" | sed -E 's/ site=[0-9]+//; s/ (compute_ns|comm_ns)=[0-9]+//g'
}
