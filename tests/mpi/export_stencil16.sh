#!/usr/bin/env bash
# Records the non-periodic 2-D stencil on 16 ranks (a 4x4 grid) and checks
# its exports: the communication matrix has exactly the 48 neighbour pairs,
# 20 messages of 24 doubles each; every send is matched in the Perfetto
# JSON; otf2-print reads the OTF2 archive with the trace's record counts.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
CHECK="$SRC/tests/data/export_checks.py"

CHECKS=$((CHECKS + 1))
record stencil2d_nonperiodic 16 20
if [[ $RC -ne 0 || ! -f $DIR/t.tf ]]; then
  bad "stencil2d at 16 ranks: tracefold record exited $RC"
  show_run "$DIR/out.txt" "$DIR/err.txt"
else
  T=$DIR/t.tf
  if "$TF" stats "$T" --matrix m.csv --matrix-svg m.svg --matrix-png m.png >stats.txt 2>&1 &&
    python3 "$CHECK" grid 4 4 20 $((20 * 24 * 8)) m.csv m.svg m.png; then
    ok "16-rank stencil matrix: exactly the neighbour pattern"
  else
    bad "16-rank stencil matrix"
    cat stats.txt m.csv >&2 || true
  fi
  mkdir -p expand
  for ((r = 0; r < 16; r++)); do "$TF" expand "$T" -r $r >expand/rank-$r.txt; done
  if "$TF" export "$T" --perfetto s.json --otf2 otf2 2>export.txt &&
    python3 "$CHECK" perfetto s.json expand 960 &&
    otf2-print otf2/traces.otf2 >otf2.txt 2>otf2.err && [[ ! -s otf2.err ]] &&
    python3 "$CHECK" otf2 otf2.txt expand; then
    ok "16-rank stencil exports (Perfetto, OTF2)"
  else
    bad "16-rank stencil exports"
    cat export.txt otf2.err >&2 || true
  fi
  if grep -q "unmatched" export.txt; then bad "unmatched messages: $(cat export.txt)"; fi
fi
finish
