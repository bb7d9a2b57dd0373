#!/usr/bin/env bash
# Sampling a program that walks the loader's list of objects in a loop
# (app_sample_loader: dl_iterate_phdr on every rank for 2 s, at 250 us).
# The unwinder in the handler walks that list too, under the same lock: a
# tick that lands while the program takes or releases it (the recursive
# lock's owner not yet noted, or already cleared) must not unwind, or the
# handler waits for its own thread forever (docs/sampling.md, The loader).
# Checks: the run ends, with the program's output, samples were taken and
# none dropped: those in the loader are kept with the interrupted
# instruction alone (samples_check's leaf_only).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

CHECKS=$((CHECKS + 1))
limited out.txt err.txt "$TF" record --sample=250us -o l.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_loader" 2
summary=$(grep "^tracefold: samples of 2 ranks" err.txt || true)
read -r kept taken dropped < <(sed -n 's/.*: \([0-9]*\) kept of \([0-9]*\) taken (\([0-9]*\) dropped).*/\1 \2 \3/p' <<<"$summary") || true
if [[ $LRC -ne 0 ]]; then
  bad "the sampled run exited $LRC (124: it hung)"
  show_run out.txt err.txt
elif ! grep -q "^sample_loader: [1-9][0-9]* calls" out.txt; then
  bad "the program did not say how many calls it made"
  show_run out.txt
elif [[ -z $taken || $taken -lt 1000 || $dropped -ne 0 || $kept -ne $taken ]]; then
  bad "want over 1000 samples taken and none dropped: ${summary:-no summary}"
  show_run err.txt
elif ! "$APPS/samples_check" l.tf.timeline >check.txt 2>check.err; then
  bad "the samples do not read back"; cat check.err >&2
elif ! leaf=$(awk '$1 == "rank" && $3 == "leaf_only" { n += $4 } END { print n + 0 }' check.txt) ||
  [[ $leaf -lt 1 ]]; then
  bad "no sample was kept with its innermost frame alone (inside the loader)"; grep leaf_only check.txt >&2
else
  ok "$(cat out.txt); $kept kept of $taken taken, $leaf of them inside the loader with the innermost frame alone ($(grep -m1 -o 'leaf_only.*' check.txt))"
fi
finish
