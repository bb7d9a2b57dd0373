#!/usr/bin/env bash
# Issue 30: a slab-decomposed 3-D FFT (app_fft3d) whose transposes are
# MPI_Alltoall calls on a communicator made by MPI_Comm_split (every rank
# in one row; the columns are single ranks). Under strong scaling (a 32^3
# complex cube) each transpose sends 2*32^3/P^2 doubles to every rank:
# 16384, 4096, 1024, 256 at 2, 4, 8, 16 ranks, a law c/P^2 that no sum of
# sizes gives. Weak scaling (8 x 8 x 2P points) sends 256/P. Extrapolated
# 2, 4, 8 -> 16 and 2, 4, 16 -> 8, each must `tracefold diff` same as the
# real run, and --explain must print the law. The pencil layout too (below).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 2 4 8 16; do
  rec fft "$n" fft3d
  rec fftw "$n" fft3d 0 -8
done
same_as_real "fft3d strong: 2,4,8 -> 16" x-fft-16.tf fft-16.tf fft-2.tf fft-4.tf fft-8.tf
same_as_real "fft3d strong: 2,4,16 -> 8 (between)" b-fft-8.tf fft-8.tf fft-2.tf fft-4.tf fft-16.tf
same_as_real "fft3d weak: 2,4,8 -> 16" x-fftw-16.tf fftw-16.tf fftw-2.tf fftw-4.tf fftw-8.tf

CHECKS=$((CHECKS + 1))
"$TF" extrapolate fft-2.tf fft-4.tf fft-8.tf --ranks 16 -o e.tf --explain > fft-explain.txt 2>&1 ||
  true
rm -f e.tf
if grep -q 'field count: .*\[65536/S1^2\]' fft-explain.txt; then
  ok "fft3d: --explain prints the transpose size as 65536/S1^2"
else
  bad "fft3d: --explain: $(grep -E 'count|error' fft-explain.txt | head -6)"
fi
# 2*32^3/P^2 is a whole number up to 256 ranks (one double to each).
CHECKS=$((CHECKS + 1))
"$TF" extrapolate fft-2.tf fft-4.tf fft-8.tf --ranks 256 -o x-fft-256.tf > fft-256.log 2>&1 || true
"$TF" expand x-fft-256.tf -r 255 > fft-r255.txt 2>&1 || true
if grep -m 1 '^MPI_Alltoall' fft-r255.txt | grep -q 'count=1 '; then
  ok "fft3d: at 256 ranks each transpose sends 1 double to each rank"
else
  bad "fft3d: 256 ranks: $(cat fft-256.log; grep -m 1 Alltoall fft-r255.txt)"
fi
fails_with "fft3d: 1024 ranks (a fraction of a double)" \
  "node [0-9]+ \(MPI_Alltoall at .*\), field count, ranks at x:first: values 16384 in fft-2.tf \(2\), 4096 in fft-4.tf \(4\), 1024 in fft-8.tf \(8\) extrapolate to a fraction at 1024 \(65536/S1\^2\): .*give a rank count at which the law is a whole number" \
  fft-2.tf fft-4.tf fft-8.tf --ranks 1024 -o x-fft-1024.tf

# Layout 2: pencils on the MPI_Dims_create grid (2x2, 4 rows of 2, 4x4, 8
# rows of 4). The ranks have no peers at all; the grid is read from the
# row communicator's groups, and the two transposes send 65536/(S1^2*S2)
# (along a row of S1) and 65536/(S1*S2^2) (along a column of S2) doubles.
for n in 4 8 16 32; do rec fftp "$n" fft3d 0 32 2; done
same_as_real "fft3d pencils: 4,8,16 -> 32" x-fftp-32.tf fftp-32.tf fftp-4.tf fftp-8.tf fftp-16.tf
same_as_real "fft3d pencils: 4,8,32 -> 16 (between)" b-fftp-16.tf fftp-16.tf \
  fftp-4.tf fftp-8.tf fftp-32.tf
CHECKS=$((CHECKS + 1))
"$TF" extrapolate fftp-4.tf fftp-8.tf fftp-16.tf --ranks 32 -o e.tf --explain > fftp-explain.txt \
  2>&1 || true
rm -f e.tf
if grep -q '^input fftp-8.tf: 8 ranks, grid 4x2, .*sizes: x=2 (groups of communicator [0-9]*), y=4' \
  fftp-explain.txt && grep -q 'field count: \[65536/(S1^2\*S2)\]\*2 @ x:first y:first' fftp-explain.txt &&
  grep -q 'field count: \[65536/(S1\*S2^2)\]\*2 @ x:first y:first' fftp-explain.txt; then
  ok "fft3d pencils: --explain reads the grid from the row communicator, counts 65536/(S1^2*S2), 65536/(S1*S2^2)"
else
  bad "fft3d pencils: --explain: $(grep -E '^input|field count' fftp-explain.txt | head -8)"
fi
# The extrapolated trace keeps its inputs' module table, so its call sites
# are named like a recorded trace's: `print` and `stats` show the function
# that makes the Alltoall (transpose, in fft3d.c) without symbolizing.
for view in print stats; do
  CHECKS=$((CHECKS + 1))
  "$TF" "$view" x-fft-16.tf > "sym-$view.txt" 2>&1 || true
  "$TF" "$view" fft-16.tf > "sym-real-$view.txt" 2>&1 || true
  if grep -q 'transpose (.*fft3d\.c:[0-9]*)' "sym-$view.txt"; then
    ok "fft3d: $view of the extrapolated trace names transpose (fft3d.c)"
  else
    bad "fft3d: $view of the extrapolated trace has no 'transpose (...fft3d.c:N)':" \
      "$(grep -m 3 Alltoall "sym-$view.txt"); the real trace's: $(grep -m 1 Alltoall "sym-real-$view.txt")"
  fi
done
# Symbols embedded by `tracefold symbolize` come along too, and inputs that
# name a frame differently are refused.
CHECKS=$((CHECKS + 1))
for n in 2 4 8; do "$TF" symbolize fft-$n.tf -o sy-$n.tf > /dev/null 2>&1 || true; done
# (to a file first: grep -q closing the pipe early would kill convert with
# SIGPIPE, which pipefail turns into a failure)
if "$TF" extrapolate sy-2.tf sy-4.tf sy-8.tf --ranks 16 -o sy-16.tf > sy.log 2>&1 &&
  "$TF" convert --text sy-16.tf -o sy-16.txt > /dev/null 2>&1 &&
  grep -q '^symbol app_fft3d+0x[0-9a-f]* transpose ' sy-16.txt; then
  ok "fft3d: symbols embedded in the inputs are embedded in the extrapolated trace"
else
  bad "fft3d: no embedded 'symbol app_fft3d+0x... transpose' line: $(cat sy.log)"
fi
"$TF" convert --text sy-4.tf -o - 2> /dev/null | sed 's/^\(symbol app_fft3d+0x[0-9a-f]*\) transpose /\1 transpose_v2 /' > sy-4-renamed.tf
fails_with "fft3d: inputs that name a frame differently" \
  "sy-4-renamed.tf and sy-2.tf name call-site frame app_fft3d\+0x[0-9a-f]+ differently \(transpose_v2 .* against transpose .*\): .*symbolize every one against the same build" \
  sy-2.tf sy-4-renamed.tf sy-8.tf --ranks 16 -o sy-bad.tf
# Inputs recorded from different builds (another build-id) are refused.
"$TF" convert --text fft-8.tf -o - 2> /dev/null |
  sed 's/^\(module app_fft3d .*build-id=\)[0-9a-f]*/\10123456789abcdef/' > fft-8-other.tf
fails_with "fft3d: an input recorded from another build of the program" \
  "fft-8-other.tf and fft-2.tf were recorded with different binaries of module app_fft3d \(build-id 0123456789abcdef, .* against build-id [0-9a-f]+, .*\): .*record every input with the same build" \
  fft-2.tf fft-4.tf fft-8-other.tf --ranks 16 -o x-bad.tf
finish
