#!/usr/bin/env bash
# Reading million-rank traces back, two tracefold binaries side by side
# (issue 14): `expand -r`, `print` and `stats` on the outputs that
#   COST_ONLY=1 TARGETS=1048576 KEEP_DIR=DIR scripts/bench-extrap.sh
# leaves in DIR, each command run by OLD then NEW: wall time, CPU time
# (user + sys) and peak memory (/usr/bin/time). A run longer than LIMIT
# seconds (default 300) is stopped; its CPU time is then what it had used.
#   scripts/bench-readback.sh OLD_TRACEFOLD NEW_TRACEFOLD DIR
set -uo pipefail
OLD=$(realpath "$1"); NEW=$(realpath "$2"); cd "$3" || exit 1
LIMIT=${LIMIT:-300}
t=$(mktemp); trap 'rm -f "$t"' EXIT
echo "start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| file | command | binary | wall s | CPU s | peak MiB |"
echo "|---|---|---|---|---|---|"
for v in "stencil2d periodic" "stencil2d nonperiodic" stencil3d grid_comms mg_vcycle; do
  f="x-$v-1048576.tf"
  [[ -s $f ]] || continue
  for c in "expand -r 524295" print stats; do
    read -r -a w <<<"$c"
    for b in old new; do
      bin=$OLD; [[ $b == new ]] && bin=$NEW
      /usr/bin/time -f "%e %U %S %M" -o "$t" timeout "$LIMIT" "$bin" "${w[@]}" "$f" >/dev/null 2>&1
      rc=$?
      read -r e u s m < <(tail -1 "$t")
      [[ $rc == 124 ]] && e="stopped at $LIMIT"
      printf '| %s | %s | %s | %s | %s | %s |\n' "$v" "$c" "$b" "$e" \
        "$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')" \
        "$(awk -v m="$m" 'BEGIN {printf "%.1f", m / 1024}')"
    done
  done
done
echo "end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
