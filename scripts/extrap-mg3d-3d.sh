#!/usr/bin/env bash
# The 3-D multigrid (app_mg3d, weak scaling: 2 points a rank and
# dimension, 3 levels, so the third level keeps the ranks at even
# coordinates busy) recorded at the counts whose MPI_Dims_create grids
# keep two busy ranks or more along every dimension on that level: 64
# (4x4x4), 128 (8x4x4) and 256 (8x8x4), oversubscribed on this machine.
# Too large for a test. For each recording: wall time and the machine's
# peak memory in use (the run is stopped if less than 1 GiB stays
# available). Then `tracefold extrapolate` on them (wall time, peak
# memory, and the result: `tracefold diff` against the real run where one
# exists, or the refusal):
#   - 64, 256 -> 128 (every side of the target in some input);
#   - 64, 128 -> 256 and 64, 128, 256 -> 512, 1,024 and 16,384;
#   - with a 512-rank recording (8x8x8, the first count with a side of 8
#     along every dimension): 64, 128, 512 -> 256 and 64, 128, 256, 512 ->
#     1,024 and 16,384.
# Settings (environment): BUILD_DIR=build, COUNTS="64 128 256" (the
# counts recorded, "64 128 256 512" for the last rows: 512 ranks take
# about 9 minutes here and load the machine to 300 or more; empty: none,
# the traces already in KEEP_DIR are used; rows whose inputs are missing
# say so), CYCLES=2, KEEP_DIR=DIR (write the traces there and keep them).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
COUNTS="${COUNTS-64 128 256}"
CYCLES="${CYCLES:-2}"
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
APP="$PWD/$BUILD_DIR/tests/apps/app_mg3d"
if [[ -n ${KEEP_DIR:-} ]]; then
  mkdir -p "$KEEP_DIR"; out=$(cd "$KEEP_DIR" && pwd)
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
cd "$out"
echo "load before: $(uptime)"

# used_mib, available_mib: the machine's memory now (free -m).
used_mib() { free -m | awk 'NR == 2 { print $3 }'; }
avail_mib() { free -m | awk 'NR == 2 { print $7 }'; }

# record NP: app_mg3d at NP ranks into mgw-NP.tf; prints a table row.
record() {
  local n=$1 peak base start secs rc=0 pid
  base=$(used_mib); peak=$base
  start=$(date +%s.%N)
  "$TF" record -o "mgw-$n.tf" -- mpirun --mca btl self,vader -np "$n" "$APP" "$CYCLES" 0 0 2 3 \
    > "rec-$n.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    sleep 2
    peak=$(( $(used_mib) > peak ? $(used_mib) : peak ))
    if (( $(avail_mib) < 1024 )); then
      echo "record at $n ranks: less than 1 GiB available, stopped" >&2
      kill -- "$pid"
    fi
  done
  wait "$pid" || rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  printf '| record %5d ranks | %6.1f s | %6d MiB more in use | exit %d, %s |\n' "$n" "$secs" \
    $((peak - base)) "$rc" "$( [[ -s mgw-$n.tf ]] && echo "$(stat -c %s "mgw-$n.tf") B" || echo "no trace")"
}

# extrap TARGET COUNTS...: extrapolate mgw-N.tf of COUNTS to TARGET ranks;
# prints a table row, and the refusal after the table rows.
extrap() {
  local n=$1 inputs=() c wall rss result from
  shift
  from=$(IFS=,; echo "$*")
  local x="x-${from//,/-}-$n"
  for c in "$@"; do
    [[ -s mgw-$c.tf ]] || { echo "| extrapolate $from -> $n | (no mgw-$c.tf) |"; return 0; }
    inputs+=("mgw-$c.tf")
  done
  if /usr/bin/time -v "$TF" extrapolate "${inputs[@]}" --ranks "$n" --no-plugins -o "$x.tf" \
    > "$x.log" 2> "$x.err"; then
    if [[ -s mgw-$n.tf ]]; then
      result=$("$TF" diff "$x.tf" "mgw-$n.tf" 2>&1 | head -3 | tr '\n' ' ') || true
    else
      result="$(stat -c %s "$x.tf") B, no real run to diff"
    fi
  else
    result="refused (below)"
    refusals+=("$from -> $n: $(grep -v -e '^\s' -e '^Command' "$x.err")")
  fi
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$x.err")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$x.err")
  printf '| extrapolate %-11s -> %5d | %8s | %6.1f MiB | %s |\n' "$from" "$n" "$wall" \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$result"
}

refusals=()
for n in $COUNTS; do record "$n"; done
extrap 128 64 256
extrap 256 64 128
for n in 512 1024 16384; do extrap "$n" 64 128 256; done
extrap 256 64 128 512
for n in 1024 16384; do extrap "$n" 64 128 256 512; done
for r in "${refusals[@]}"; do printf '\n%s\n' "$r"; done
echo "load after: $(uptime)"
