#!/usr/bin/env bash
# Multi-request completions (Waitall, Waitsome, Testall, Testsome) record
# what their wildcard receives matched, as `srcs`/`mtags` lists
# (tests/apps/wild_statuses.c, wild_statuses_f.f90):
#  - every trace is lossless (expands to exactly the raw logs);
#  - rank 0's expanded trace holds, per completion phase, the sources and
#    tags the program itself printed (from its statuses, or from its
#    payloads when it passed MPI_STATUSES_IGNORE), entry by entry in
#    request array order, undef for the cancelled receive;
#  - Testall calls that found nothing, and completions without wildcard
#    receives (the other ranks), carry no srcs/mtags;
#  - the program prints the same with and without tracing (the recorder's
#    stand-in for MPI_STATUSES_IGNORE changes nothing for it);
#  - `tracefold replay --deterministic` names the recorded source and tag
#    in every wildcard MPI_Irecv but the cancelled ones (which matched
#    nothing); naming a wrong one would leave a receive hanging.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

# check_matches NAME NP STEPS SKIP: rank 0's trace against its printout.
# SKIP: request array positions that are no wildcard receives.
check_matches() {
  local name=$1 np=$2 steps=$3 skip=$4 dir="$WORK/$1-np$2" msg
  [[ -s $dir/t.tf ]] || return 0
  CHECKS=$((CHECKS + 1))
  "$TF" expand -r 0 "$dir/t.tf" >"$dir/rank0.txt" 2>"$dir/expand-err.txt" || {
    bad "$name at $np ranks: tracefold expand -r 0 failed"
    show_run "$dir/expand-err.txt"
    return 0
  }
  if msg=$(python3 - "$dir/out.txt" "$dir/rank0.txt" "$skip" 2>&1 <<'EOF'
import re, sys

printed_path, trace_path, skip_arg = sys.argv[1:4]
skip = {int(x) for x in skip_arg.split(",") if x}

def ints(text):
    return [x for x in text.split(",") if x]

printed = []
for line in open(printed_path):
    m = re.match(r"^wild step (\d+) (MPI_\w+)( ignore)? srcs=\[([^]]*)\] mtags=\[([^]]*)\]$", line.strip())
    if m:
        printed.append((m.group(2), ints(m.group(4)), ints(m.group(5))))

def field(line, name):
    m = re.search(r" %s=(\[[^]]*\]|\S+)" % name, line)
    if not m:
        return None
    v = m.group(1)
    return ints(v[1:-1]) if v.startswith("[") else v

events = [l.split()[0:1] + [l] for l in open(trace_path)
          if re.match(r"^MPI_(Wait|Test)(all|some) ", l)]
phases, i = [], 0
while i < len(events):
    op, line = events[i]
    links = field(line, "links")
    wild = [p for p in range(len(links)) if p not in skip]
    srcs, mtags = [None] * len(wild), [None] * len(wild)
    if op in ("MPI_Waitall", "MPI_Testall"):
        i += 1
        if field(line, "flag") == "0":
            if field(line, "srcs") is not None:
                sys.exit("Testall with flag=0 has srcs: " + line.strip())
            continue
        srcs, mtags = field(line, "srcs"), field(line, "mtags")
        if srcs is None or mtags is None:
            sys.exit("no srcs/mtags: " + line.strip())
    else:
        # A Waitsome/Testsome loop: each call lists the wildcard receives
        # still live (non-null links), in array order.
        while None in srcs:
            if i >= len(events) or events[i][0] != op:
                sys.exit("%s loop ends with receives unmatched: %s" % (op, srcs))
            line = events[i][1]
            i += 1
            live = [p for p, l in enumerate(field(line, "links")) if l != "null" and p not in skip]
            s, t = field(line, "srcs"), field(line, "mtags")
            if s is None:
                continue
            if len(s) != len(live) or len(t) != len(live):
                sys.exit("want %d entries (live wildcard receives): %s" % (len(live), line.strip()))
            for pos, a, b in zip(live, s, t):
                if a != "undef":
                    srcs[wild.index(pos)], mtags[wild.index(pos)] = a, b
    phases.append((op, srcs, mtags))

if len(phases) != len(printed):
    sys.exit("%d completion phases in the trace, %d printed" % (len(phases), len(printed)))
for n, (got, want) in enumerate(zip(phases, printed)):
    if got != want:
        sys.exit("phase %d: trace %s, program printed %s" % (n, got, want))
print("%d phases match" % len(phases))
EOF
  ); then
    ok "$name at $np ranks: rank 0's srcs/mtags match its printout ($msg)"
  else
    bad "$name at $np ranks: $msg"
  fi
  # Other ranks complete no wildcard receives.
  local r
  for ((r = 1; r < np; ++r)); do
    if "$TF" expand -r "$r" "$dir/t.tf" | grep -Eq ' (srcs|mtags)='; then
      bad "$name at $np ranks: rank $r has srcs/mtags without wildcard receives"
    fi
  done
}

# same_output NAME NP STEPS: the program prints the same untraced.
same_output() {
  local name=$1 np=$2 steps=$3
  [[ -s $WORK/$name-np$np/out.txt ]] || return 0
  CHECKS=$((CHECKS + 1))
  plain "$name" "$np" "$steps"
  if [[ $PRC -ne 0 ]]; then
    bad "$name at $np ranks: untraced run exited $PRC"
    show_run "$PDIR/plain.txt" "$PDIR/plain-err.txt"
  elif ! diff "$PDIR/plain.txt" "$WORK/$name-np$np/out.txt" >&2; then
    bad "$name at $np ranks: output differs with tracing"
  else
    ok "$name at $np ranks: same output with and without tracing"
  fi
}

# deterministic_replay NAME NP STEPS CANCELLED: replays the trace with
# --deterministic under the recorder; CANCELLED wildcard Irecvs of rank 0
# matched nothing and stay wildcards.
deterministic_replay() {
  local name=$1 np=$2 steps=$3 cancelled=$4 dir="$WORK/$1-np$2" left
  [[ -s $dir/t.tf ]] || return 0
  CHECKS=$((CHECKS + 1))
  limited "$dir/replay.txt" "$dir/replay-err.txt" "$TF" record -o "$dir/replay.tf" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$TF" replay --deterministic "$dir/t.tf"
  if [[ $LRC -ne 0 ]]; then
    bad "$name at $np ranks: deterministic replay exited $LRC"
    show_run "$dir/replay-err.txt"
    return 0
  fi
  left=$("$TF" expand -r 0 "$dir/replay.tf" | grep -E '^MPI_Irecv .*(peer|tag)=any' | grep -vc ' tag=999 ' || true)
  if [[ $left -ne 0 ]]; then
    bad "$name at $np ranks: $left wildcard MPI_Irecvs of rank 0 left unresolved by --deterministic"
    "$TF" expand -r 0 "$dir/replay.tf" | grep -E '^MPI_Irecv .*(peer|tag)=any' | grep -v ' tag=999 ' | head -n 3 >&2
    return 0
  fi
  left=$("$TF" expand -r 0 "$dir/replay.tf" | grep -Ec '^MPI_Irecv .*peer=any tag=999 ' || true)
  if [[ $left -ne $cancelled ]]; then
    bad "$name at $np ranks: want $cancelled cancelled wildcard MPI_Irecvs in the replay, found $left"
    return 0
  fi
  ok "$name at $np ranks: --deterministic resolves every matched wildcard MPI_Irecv"
}

for np in 3 4; do
  check_lossless wild_statuses $np 3 "^wild_statuses: $np ranks, 3 steps, checksum"
  check_matches wild_statuses $np 3 1,4
  same_output wild_statuses $np 3
done
# 3 steps x (Waitall, Testall) x (statuses, MPI_STATUSES_IGNORE): 12 cancelled.
deterministic_replay wild_statuses 3 3 12
if [[ -x $APPS/app_wild_statuses_f ]]; then
  check_lossless wild_statuses_f 3 3 '^wild_statuses_f: 3 ranks, 3 steps, checksum'
  check_matches wild_statuses_f 3 3 ''
  same_output wild_statuses_f 3 3
else
  echo "no Fortran compiler: app_wild_statuses_f not built, skipped"
fi
finish
