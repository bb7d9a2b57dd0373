/* One function per kind of VEX IR access that plain loads and stores do not
 * exercise, for the tracefold-mem tests:
 *   masked   AVX2 vmaskmovpd load and store, 2 of 4 lanes enabled
 *            (guarded loads and stores, one 8-byte access per enabled lane);
 *   atomic   lock xadd (a compare-and-swap: one 8-byte load and store);
 *   fxsave   fxsave64 (a dirty helper writing the 512-byte area, plus the
 *            XMM registers as plain stores).
 * usage: irkinds (prints the results so the calls cannot be dropped) */
#include <immintrin.h>
#include <stdio.h>

__attribute__((noinline, target("avx2"))) void masked(double* dst, const double* src) {
  __m256i mask = _mm256_set_epi64x(0, -1, 0, -1); /* lanes 0 and 2 */
  __m256d v = _mm256_maskload_pd(src, mask);
  _mm256_maskstore_pd(dst, mask, v);
}

__attribute__((noinline)) long atomic(long* counter) {
  return __sync_fetch_and_add(counter, 5);
}

__attribute__((noinline)) void fxsave(unsigned char* area) {
  __asm__ volatile("fxsave64 %0" : "=m"(*(unsigned char(*)[512])area) : : "memory");
}

int main(void) {
  double src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
  long counter = 10;
  static unsigned char area[512] __attribute__((aligned(16)));
  masked(dst, src);
  long old = atomic(&counter);
  fxsave(area);
  printf("masked %.0f %.0f %.0f %.0f atomic %ld %ld fxsave %d\n", dst[0], dst[1], dst[2], dst[3],
         old, counter, area[24] | area[25]);
  return 0;
}
