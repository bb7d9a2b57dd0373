# Small statistics shared by the benchmark scripts. Sourced, not run.
#
# median: the median of the numbers on standard input, one per line (of an
# even count, the lower of the two middle ones).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
