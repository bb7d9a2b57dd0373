#!/usr/bin/env bash
# Exports of a trace with threads take each thread's calls at the times the
# timeline recorded for that thread (tests/apps/thread_late.c,
# MPI_THREAD_MULTIPLE, 2 ranks x 2 threads): in the OTF2 archive, read
# back with otf2-print, location 3 (thread 1 of rank 1) enters its send
# about its sleep after location 2 (thread 1 of rank 0) entered MPI_Recv,
# location 0 does not wait, and the worker threads' calls lie between
# their ranks' two barriers, as the program makes them; the Perfetto
# track of that thread shows the same receive, its time labelled
# "measured". Laid out from mean times, every thread would start at time
# 0, before its rank's first barrier ends.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
record_thread_late 400

CHECKS=$((CHECKS + 1))
if ! "$TF" export t.tf --otf2 t-otf2 --perfetto t.json 2>export.txt; then
  bad "tracefold export failed"
  show_run export.txt
elif ! grep -q "timeline recorded" export.txt; then
  bad "export did not use the recorded timeline"
  show_run export.txt
elif ! otf2-print t-otf2/traces.otf2 >otf2.txt 2>otf2.err || [[ -s otf2.err ]]; then
  bad "otf2-print"
  show_run otf2.err
elif msg=$(python3 - otf2.txt t.json "$SLEPT" <<'PY' 2>&1
import json, re, sys
slept = float(sys.argv[3])
calls = {}  # location -> [(region, enter s, leave s)]
open_ = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) < 3 or w[0] not in ("ENTER", "LEAVE") or not w[1].isdigit():
        continue
    loc, t = int(w[1]), int(w[2]) * 1e-9
    # 'Region: "MPI_Recv @ worker [app_thread_late+0x130a]"'
    region = re.search(r'Region: "([^" ]+)', line).group(1)
    if w[0] == "ENTER":
        open_[loc] = (region, t)
    else:
        r, t0 = open_.pop(loc)
        assert r == region, (loc, r, region)
        calls.setdefault(loc, []).append((region, t0, t))
assert sorted(calls) == [0, 1, 2, 3], f"locations {sorted(calls)}"
def one(loc, region):
    got = [c for c in calls[loc] if c[0] == region]
    assert len(got) == 1, f"location {loc}: {len(got)} {region}"
    return got[0]
def barriers(loc):
    return [c for c in calls[loc] if c[0] == "MPI_Barrier"]
recv = one(2, "MPI_Recv")
send = one(3, "MPI_Send")
waited = recv[2] - recv[1]
# The Late Sender as analyze measures it: from the receive's start to the
# send's (the end also has the delivery, which a loaded machine delays).
late = send[1] - recv[1]
assert abs(late - slept) <= 0.25 * slept, f"location 3 sends {late:.3f} s after location 2 waits, slept {slept:.3f} s"
assert waited >= late, f"location 2 waits {waited:.3f} s in MPI_Recv, its send came {late:.3f} s late"
main_recv = one(0, "MPI_Recv")
assert main_recv[2] - main_recv[1] < 0.25 * slept, f"location 0 waits {main_recv[2] - main_recv[1]:.3f} s"
assert recv[2] >= send[1], f"the receive ends at {recv[2]:.6f}, before its send began at {send[1]:.6f}"
for rank, worker in ((0, 2), (1, 3)):
    b = barriers(rank)
    assert len(b) == 2, f"location {rank}: {len(b)} barriers"
    first, last = calls[worker][0], calls[worker][-1]
    assert first[1] >= b[0][2], f"location {worker} starts at {first[1]:.6f}, before its rank's barrier ends at {b[0][2]:.6f}"
    assert last[2] <= b[1][1], f"location {worker} ends at {last[2]:.6f}, after its rank's last barrier began at {b[1][1]:.6f}"
# Perfetto: the same receive on the track of thread 1 of rank 0.
slices = [e for e in json.load(open(sys.argv[2]))["traceEvents"]
          if e.get("ph") == "X" and e.get("args", {}).get("op") == "MPI_Recv" and e.get("pid") == 0
          and e.get("tid") == 1]
assert len(slices) == 1, f"Perfetto: {len(slices)} MPI_Recv slices on rank 0 thread 1"
assert abs(slices[0]["dur"] * 1e-6 - waited) < 1e-3, f"Perfetto: {slices[0]['dur']} us, OTF2 {waited:.6f} s"
labels = {e["args"]["time"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X" and "args" in e}
assert labels == {"measured"}, f"Perfetto: the calls' times are labelled {labels}"
print(f"location 2 waits {waited:.3f} s in MPI_Recv, {late:.3f} s for its send (slept {slept:.3f} s), location 0 "
      f"{main_recv[2] - main_recv[1]:.3f} s; workers within their ranks' barriers; Perfetto agrees, its times labelled measured")
PY
); then
  ok "$msg"
else
  bad "$msg"
fi
finish
