#!/usr/bin/env bash
# Instructions the recorder spends per unsuccessful poll (MPI_Test,
# MPI_Testany, MPI_Testsome, MPI_Testall, MPI_Iprobe), counted by callgrind
# on rank 1 of bench/mpi/polls.c (2 ranks; rank 1 polls a known number of
# times while nothing can arrive). Two measures:
#   per kernel: inclusive instructions of the kernel's function (poll_test,
#     ...) traced minus untraced, over its polls: everything the wrapper
#     does around the MPI library's call, but not folding deferred to a
#     later call;
#   end of call, all kernels: instructions in tracefold::record::Call::~Call
#     (what scripts/bench-callpath.sh counts, folding included wherever it
#     happens) with POLLS polls per round minus with none, over all polls
#     (polls on the fast path never reach ~Call);
#   all in, all kernels: every instruction executed inside libtracefold.so
#     (wrappers, fast path, recorder, folding of the repeats, merge and
#     write at MPI_Finalize) with POLLS polls per round minus with none,
#     over all polls: the honest figure, deferred work included.
# callgrind does not simulate the vDSO: clock_gettime counts as a syscall
# stub of about 10 instructions (outside libtracefold.so), so the real cost
# of the two clock reads per poll is higher than any of these says.
# TRACEFOLD_POLL_FASTPATH=0 in the environment measures the slow path.
#   BUILD_DIR=build POLLS=1000 ROUNDS=20 scripts/bench-polls.sh
# KEEP_DIR=DIR keeps the callgrind files there (cg.all: the whole poller;
# callgrind_annotate them).
# Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD_DIR="${BUILD_DIR:-build}"
POLLS="${POLLS:-1000}"
ROUNDS="${ROUNDS:-20}"
command -v valgrind >/dev/null || { echo "bench-polls: needs valgrind" >&2; exit 2; }
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-polls: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -O2 -g bench/mpi/polls.c -o "$work/polls"
cat >"$work/rank1.sh" <<'SH'
#!/bin/bash
# Only rank 1 (the poller) runs under callgrind.
if [[ ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}} == 1 ]]; then
  exec valgrind -q --tool=callgrind --callgrind-out-file="$CG_OUT" ${CG_TOGGLE:+"--toggle-collect=$CG_TOGGLE"} "$@"
fi
exec "$@"
SH
chmod +x "$work/rank1.sh"
# run NAME TRACED TOGGLE POLLS
run() {
  local name=$1 traced=$2 toggle=$3 polls=$4
  local cmd=(mpirun -np 2 "$work/rank1.sh" "$work/polls" "$polls" "$ROUNDS")
  if [[ $traced == yes ]]; then cmd=("$TF" record -o "$work/$name.tf" -- "${cmd[@]}"); fi
  (cd "$work" && CG_OUT="$work/cg.$name" CG_TOGGLE="$toggle" "${cmd[@]}" >"$work/out.$name" 2>"$work/err.$name") ||
    { cat "$work/err.$name" >&2; exit 1; }
}
inclusive() {  # FILE FUNCTION -> inclusive instructions
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v f="$2" '!found && $0 ~ (":" f "([ .]|$)") { gsub(",", "", $1); v = $1; found = 1 } END { print found ? v : 0 }'
}
run plain no 'poll_*' "$POLLS"
run traced yes 'poll_*' "$POLLS"
run end yes 'tracefold::record::Call::~Call()' "$POLLS"
run end0 yes 'tracefold::record::Call::~Call()' 0
run all yes '' "$POLLS"
run all0 yes '' 0
printf '%-10s %8s %14s %14s %10s\n' kernel polls untraced traced "per poll"
total=0
for k in test testany testsome testall iprobe; do
  n=$(awk -v k="$k" '$1 == k { print $2 }' "$work/out.traced")
  total=$((total + n))
  p=$(inclusive "$work/cg.plain" "poll_$k")
  t=$(inclusive "$work/cg.traced" "poll_$k")
  awk -v k="$k" -v n="$n" -v p="$p" -v t="$t" 'BEGIN { printf "%-10s %8d %14d %14d %10.0f\n", k, n, p, t, (t - p) / n }'
done
e=$(callgrind_annotate "$work/cg.end" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
e0=$(callgrind_annotate "$work/cg.end0" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
awk -v n="$total" -v e="$e" -v e0="$e0" 'BEGIN { printf "end of call (Call::~Call), all kernels: %d - %d instructions over %d polls: %.0f per poll\n", e, e0, n, (e - e0) / n }'
in_lib() {  # FILE -> self instructions of every function in libtracefold.so
  callgrind_annotate --threshold=100 "$1" 2>/dev/null |
    awk '/\[.*libtracefold\.so\]$/ { gsub(",", "", $1); s += $1 } END { printf "%d\n", s }'
}
# callgrind_annotate names the object only on lines of the object's own
# source files: code inlined from a header (histogram.hpp into the folder,
# recorder_impl.hpp into the fast path) is left out by in_lib. This sums
# the self cost of every instruction of libtracefold.so from the file
# itself (cost lines under an ob= of the library, calls' inclusive costs
# skipped; names may be defined on ob=, cob= or in compressed form).
in_object() {  # FILE -> self instructions in libtracefold.so, inlined code included
  python3 - "$1" <<'PY'
import re, sys
names, cur, skip, total = {}, None, False, 0
for line in open(sys.argv[1]):
    if line.startswith(("ob=", "cob=")):
        m = re.match(r"c?ob=(?:\((\d+)\))? ?(.*)", line.rstrip("\n"))
        ident, name = m.group(1), m.group(2)
        if ident and name:
            names[ident] = name
        if line.startswith("ob="):
            cur = names.get(ident) if ident else name
        continue
    if line.startswith("calls="):
        skip = True
        continue
    if line[:1].isdigit() or line[:1] in "+-*":
        if skip:
            skip = False
        elif cur and cur.endswith("libtracefold.so"):
            parts = line.split()
            if len(parts) > 1:
                total += int(parts[1])
print(total)
PY
}
if [[ -n ${KEEP_DIR:-} ]]; then mkdir -p "$KEEP_DIR" && cp "$work"/cg.* "$KEEP_DIR/"; fi
a=$(in_lib "$work/cg.all")
a0=$(in_lib "$work/cg.all0")
awk -v n="$total" -v a="$a" -v a0="$a0" 'BEGIN { printf "all in (libtracefold.so), all kernels: %d - %d instructions over %d polls: %.0f per poll\n", a, a0, n, (a - a0) / n }'
o=$(in_object "$work/cg.all")
o0=$(in_object "$work/cg.all0")
awk -v n="$total" -v a="$o" -v a0="$o0" 'BEGIN { printf "all in, inlined code included, all kernels: %d - %d instructions over %d polls: %.0f per poll\n", a, a0, n, (a - a0) / n }'
