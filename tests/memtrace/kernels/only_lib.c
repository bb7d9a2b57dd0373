/* The shared library of only_remap.c, built twice with FN set to two names
 * of the same length (target_fn, others_fn) so that the function lies at
 * the same offset in both files. */
void FN(double* b, long n) {
  for (long i = 0; i < n; i++) b[i] = (double)i;
}
