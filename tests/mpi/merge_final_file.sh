#!/usr/bin/env bash
# The merge at MPI_Finalize writes the compact file with fields derived from
# their loops wherever shorter (DerivedFields::kSameValues), over reduction
# trees of several radices: polling programs whose probes' flags and
# sources follow their loops' trip counts must still expand to exactly the
# raw logs, and TRACEFOLD_MERGE_STATS must split rank 0's merge time.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
for spec in "amg_like 30" "exchange_setup 20"; do
  read -r prog arg <<<"$spec"
  for radix in 2 3 8; do
    what="$prog $arg at 5 ranks, radix $radix"
    rm -rf raw
    if ! TRACEFOLD_MERGE_RADIX=$radix TRACEFOLD_MERGE_STATS=1 "$TF" record -o t.tf --raw-log raw -- \
      "$MPIRUN" -np 5 "$APPS/app_$prog" "$arg" >out.txt 2>err.txt; then
      echo "FAIL: $what: record failed" >&2; cat err.txt >&2; fail=1; continue
    fi
    if ! grep -Eq '^tracefold: merge on rank 0 \(processor time\): local fold [0-9.]+ s, rounds [0-9.]+ s, file [0-9.]+ s$' err.txt; then
      echo "FAIL: $what: no merge statistics line" >&2; cat err.txt >&2; fail=1
    fi
    # The default file form is compact, not the text form.
    if [[ $(head -c 15 t.tf) == tracefold-trace ]]; then
      echo "FAIL: $what: the trace is text, not compact" >&2; fail=1
    fi
    if ! d=$("$TF" diff raw t.tf 2>&1); then
      echo "FAIL: $what: trace differs from the raw logs: $d" >&2; fail=1; continue
    fi
    echo "ok: $what: lossless ($(stat -c %s t.tf) bytes)"
  done
done
exit $fail
