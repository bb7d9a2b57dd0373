# Shared callgrind set-up of the scripts that count the recorder's
# instructions a call. Sourced, not run. Instruction counts do not move
# with the machine's load, unlike wall times.
#
# callgrind_need: installs valgrind (Debian package) when it is missing.
callgrind_need() {
  command -v valgrind >/dev/null && return
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends valgrind
}
#
# callgrind_rank0 FILE: writes FILE, a wrapper for mpirun to start each rank
# with: rank 0 runs under callgrind into $CG_OUT, counting only inside the
# recorder's end-of-call work (tracefold::record::Call::~Call, inclusive:
# call site, lock, queue, folding); the other ranks run as they are.
callgrind_rank0() {
  cat >"$1" <<'SH'
#!/bin/bash
if [[ ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}} == 0 ]]; then
  exec valgrind -q --tool=callgrind --callgrind-out-file="$CG_OUT" \
    '--toggle-collect=tracefold::record::Call::~Call()' "$@"
fi
exec "$@"
SH
  chmod +x "$1"
}
#
# callgrind_total OUT: the instructions counted in callgrind output OUT.
callgrind_total() {
  callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
#
# callgrind_inclusive OUT PATTERN: the inclusive instructions of the first
# function whose callgrind_annotate line matches PATTERN (an awk regular
# expression), 0 when none does.
callgrind_inclusive() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v p="$2" '$0 ~ p { gsub(",", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }'
}
