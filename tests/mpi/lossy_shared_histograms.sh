#!/usr/bin/env bash
# Lossy parameter histograms shared among alike ranks (docs/format.md
# "Shared value histograms"): amg_like, whose partners, message sizes and
# probe outcomes differ on every rank, recorded at 8 ranks with
# --histogram-threshold 16. The merge at MPI_Finalize pools the ranks'
# histograms, so the trace holds fewer histogram values, in fewer
# histograms, than the ranks' own would (estimated from the raw
# logs of the same run: per rank, call site and field, the distinct values
# of each sequence the threshold turns into a histogram); the lossy note names the shared
# fields and the modelled poll loops, whose trip counts are histograms; and the trace replays probabilistically to the end, every rank
# issuing the number of calls of each operation that its expansion has.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
NP=8

CHECKS=$((CHECKS + 1))
mkdir -p amg
limited amg/rec.out amg/rec.err "$TF" record --text --histogram-threshold 16 -o amg/lossy.tf \
  --raw-log amg/raw -- "$MPIRUN" -np $NP "$APPS/app_amg_like" 20
if [[ $LRC -ne 0 || ! -s amg/lossy.tf ]]; then
  bad "amg_like at $NP ranks: lossy recording failed ($LRC)"; show_run amg/rec.err; finish
fi

lossy=$(sed -n 's/^lossy //p' amg/lossy.tf)
CHECKS=$((CHECKS + 1))
if [[ $lossy == *"histogram threshold=16"*"histograms shared by alike ranks: "*peer* ]]; then
  ok "lossy note: $lossy"
else
  bad "lossy note does not name the shared histograms: '$lossy'"
fi

# The poll loop (MPI_Iprobe alone, trip counts = empty polls + 1) is
# modelled: its trip counts are histograms and the note says so.
CHECKS=$((CHECKS + 1))
if [[ $lossy == *"poll loops modelled"* ]] && grep -qE '^ *loop [0-9]+ iters hist\(' amg/lossy.tf; then
  ok "poll loop trip counts as histograms: $(grep -cE '^ *loop [0-9]+ iters hist\(' amg/lossy.tf) loop(s)"
else
  bad "the poll loop's trip counts are not modelled (note '$lossy')"
fi

# value:count pairs of every hist(...) of the threshold's fields (peer,
# src, count) in the trace; a modelled poll loop's trip counts and its
# probe's other values are histograms too, which the estimate below of the
# ranks' own does not count
grep -E '^ *field (peer|src|count) ' amg/lossy.tf >amg/fields.txt
shared=$(grep -o 'hist([^)]*)' amg/fields.txt | tr ' ()' '\n\n\n' | grep -c ':' || true)
# the same, had every rank kept its own histograms: per rank, call site
# and field, the distinct values of each sequence that does not repeat
# with a period of up to 64 values (those fold into one run) and changes
# value more than 16 times (fewer runs than that stay exact)
own=$(for f in amg/raw/rank-*.txt; do
  awk '$1 ~ /^MPI_/ {
         site = ""; for (i = 2; i <= NF; i++) if ($i ~ /^site=/) site = $i
         for (i = 2; i <= NF; i++) if ($i ~ /^(peer|src|count)=/) {
           split($i, kv, "="); k = $1 " " site " " kv[1]
           v[k, n[k]++] = kv[2]; if (!((k, kv[2]) in seen)) { seen[k, kv[2]] = 1; d[k]++ } } }
       END { s = 0
         for (k in n) {
           ch = 0; for (i = 1; i < n[k]; i++) if (v[k, i] != v[k, i - 1]) ch++
           if (ch <= 16 || d[k] < 2) continue
           periodic = 0
           for (p = 1; p <= 64 && p < n[k] && !periodic; p++) {
             same = 1; for (i = p; i < n[k] && same; i++) if (v[k, i] != v[k, i - p]) same = 0
             periodic = same }
           if (!periodic) { s += d[k]; e++ } }
         print s, e + 0 }' "$f"
done | awk '{ s += $1; e += $2 } END { print s + 0, e + 0 }')
read -r own own_entries <<<"$own"
entries=$(grep -o 'hist(' amg/fields.txt | wc -l)
CHECKS=$((CHECKS + 1))
if [[ $shared -gt 0 && $shared -lt $own && $entries -lt $own_entries ]]; then
  ok "histograms: $entries entries of $shared values; the ranks' own: $own_entries of $own"
else
  bad "histograms: $entries entries of $shared values, not fewer than the ranks' own $own_entries of $own"
fi

CHECKS=$((CHECKS + 1))
limited amg/rep.out amg/rep.err "$MPIRUN" -np $NP "$TF" replay --no-compute --counts amg/counts.txt amg/lossy.tf
if [[ $LRC -ne 0 ]] || ! grep -q '(probabilistic)' amg/rep.out; then
  bad "probabilistic replay of the shared-histogram trace (exit $LRC)"; show_run amg/rep.out amg/rep.err
else
  want=$(for ((r = 0; r < NP; r++)); do
    "$TF" expand amg/lossy.tf -r $r | awk -v r=$r '$1 ~ /^MPI_/ && $1 != "MPI_Init" && $1 != "MPI_Finalize" { n[$1]++ }
      END { for (o in n) print r, o, n[o] }'
  done | sort)
  got=$(awk '{ print $1, $2, $3 }' amg/counts.txt | sort)
  if [[ $want == "$got" ]]; then
    ok "replayed to the end: $(cat amg/rep.out | head -n 1)"
  else
    bad "replay's calls per rank and operation differ from the trace's"
    diff <(echo "$want") <(echo "$got") | head -n 10 >&2
  fi
fi
finish
