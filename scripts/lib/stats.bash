# Small statistics shared by the benchmark scripts. Sourced, not run.
#
# median: the median of the numbers on standard input, one per line (of an
# even count, the lower of the two middle ones).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
#
# trace_cpu_ns TRACEFOLD TRACE: the processor time TRACE's computation gaps
# ask for, in nanoseconds: the sum of the compute_cpu statistic over its
# time histograms (what `replay --compute-clock cpu` spins for). Unlike a
# wall time it does not move with the machine's load.
trace_cpu_ns() {
  "$1" convert --text "$2" -o - 2> /dev/null |
    awk '$1 == "stat" && $2 == "compute_cpu" {
           for (i = 3; i <= NF; ++i) if ($i ~ /^sum=/) s += substr($i, 5)
         } END { printf "%.0f\n", s }'
}
#
# replayed_cpu_ns TRACEFOLD TRACE: trace_cpu_ns of a trace recorded from a
# `tracefold replay`, without the gap after MPI_Init and the gap before
# MPI_Finalize. Those hold the replay's own set-up and summary (an order
# check, a barrier and reductions on a private communicator), made with
# untraced PMPI calls: under MPICH, whose waits spin, they cost up to 30 ms
# of processor time a rank on a shared core, as much as a tenth of a short
# replay, and they are not the trace's computation.
replayed_cpu_ns() {
  "$1" convert --text "$2" -o - 2> /dev/null |
    awk '$1 == "node" { final = ($3 == "MPI_Finalize") }
         $1 == "time" { init = ($2 ~ /^pred=MPI_Init/) }
         $1 == "stat" && $2 == "compute_cpu" && !final && !init {
           for (i = 3; i <= NF; ++i) if ($i ~ /^sum=/) s += substr($i, 5)
         } END { printf "%.0f\n", s }'
}
