#!/usr/bin/env bash
# Laws in the square root of P on a 1-D grid: app_sqrt_ring passes a block
# around a ring of P = q*q ranks in q stages a step, N/q values a stage
# (strong scaling, N = 60) or 8 whatever q is (weak). The stage loop's
# trip count, 2*sqrt(S1) over 2 steps, and the message size 60/sqrt(S1)
# are no function of the size itself: 4, 9, 16 -> 25 and 4, 9, 25 -> 16
# must `tracefold diff` same as the real runs, --explain must name the
# laws, and 32 ranks (no square) is refused naming the law.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 9 16 25; do rec sq "$n" sqrt_ring; done
for n in 4 9 16 25; do rec sqw "$n" sqrt_ring 0 -8; done
same_as_real "sqrt_ring strong: 4,9,16 -> 25" x-sq-25.tf sq-25.tf sq-4.tf sq-9.tf sq-16.tf
same_as_real "sqrt_ring strong: 4,9,25 -> 16 (between)" b-sq-16.tf sq-16.tf sq-4.tf sq-9.tf sq-25.tf
same_as_real "sqrt_ring weak: 4,9,16 -> 25" x-sqw-25.tf sqw-25.tf sqw-4.tf sqw-9.tf sqw-16.tf

CHECKS=$((CHECKS + 1))
"$TF" extrapolate sq-4.tf sq-9.tf sq-16.tf --ranks 25 -o e.tf --explain > sq-explain.txt 2>&1 || true
rm -f e.tf
if grep -q 'loop 1 iters: sqrt(S1)\*2 @' sq-explain.txt &&
  grep -q 'field count: \[60/sqrt(S1)\]\*\[2\*sqrt(S1)\] @' sq-explain.txt; then
  ok "sqrt_ring: --explain names the stages 2*sqrt(S1) and the size 60/sqrt(S1)"
else
  bad "sqrt_ring: --explain: $(grep -E 'iters|field count' sq-explain.txt | head -4)"
fi
fails_with "sqrt_ring: 32 ranks are no square" \
  "node 1 \(MPI_Sendrecv at .*\), count, ranks at x:first \(repeat count\): values 4 in sq-4.tf \(4\), 6 in sq-9.tf \(9\), 8 in sq-16.tf \(16\) extrapolate to a fraction at 32 \(2\*sqrt\(S1\)\).*give a rank count at which the law is a whole number" \
  sq-4.tf sq-9.tf sq-16.tf --ranks 32 -o sq-32.tf
finish
