#!/usr/bin/env bash
# Each thread's calls on its own (rank, thread) location, end to end, when
# the timeline numbers threads otherwise than the trace
# (tests/apps/thread_first_calls.c, 2 ranks of a main thread and three
# workers, MPI_THREAD_MULTIPLE): the workers make their first MPI calls in
# another order than the trace writes them in, so every rank's timeline
# trailer maps its thread numbers to the trace's, which this test checks
# first. Worker W (found in the trace by its tag W, `tracefold expand`)
# makes 1 + W calls and, on rank 0, waits about W x DELAY ms for rank 1's.
# Then: export's Perfetto track of thread T of rank 0 has worker W's
# receives (tag W), the first of them waiting for its send as long as the
# program slept (within 25 %), every time labelled measured; `analyze`
# puts that Late Sender on location 0.T; `stats --ranks-svg` draws a bar
# per location with W's calls and its wait; `stats --matrix` counts every
# thread's sends; `report` shows the same bars, names the locations in its
# call-site table and analysis, and leaves the diagnosis out.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
DELAY=200
record_timed_threads 2 thread_first_calls "$DELAY"
sed -n 's/^thread_first_calls: rank 1 worker \([0-9]\) slept \([0-9.]*\) s$/\1 \2/p' out.txt >slept.txt
[[ $(wc -l <slept.txt) -eq 3 ]] || { bad "the program did not print its sleeps"; show_run out.txt; finish; }
# Worker W is the trace's thread T: its receives on rank 0 have tag W.
for t in 1 2 3; do
  "$TF" expand t.tf --rank 0 --thread "$t" >"expand-$t.txt" || bad "expand thread $t"
done

run_check() {
  local what=$1
  shift
  CHECKS=$((CHECKS + 1))
  local msg
  if msg=$(python3 - "$@" 2>&1); then
    ok "$what: $msg"
  else
    bad "$what: $msg"
  fi
}

# The python checks share this: the sleeps and each worker's thread.
cat >common.py <<'PY'
import re, struct
slept = {int(w): float(s) for w, s in (l.split() for l in open("slept.txt"))}
thread_of = {}
for t in (1, 2, 3):
    tags = {int(m) for m in re.findall(r"^MPI_Recv\b.*\btag=(\d+)", open(f"expand-{t}.txt").read(), re.M)}
    assert len(tags) == 1, f"thread {t} of rank 0 receives tags {tags}"
    thread_of[tags.pop()] = t
assert sorted(thread_of) == [1, 2, 3], f"workers by tag: {thread_of}"
def near(got, want):
    return abs(got - want) <= 0.25 * want
PY

run_check "timeline numbering" <<'PY'
import struct, sys
sys.path.insert(0, ".")
from common import thread_of
for r in (0, 1):
    data = open(f"t.tf.timeline/rank-{r}.tft", "rb").read()
    # The trailer ends with u32 n and n thread numbers (docs/format.md).
    n = struct.unpack_from("<I", data, len(data) - 4 - 16)[0]
    assert n == 4, f"rank {r}: the trailer maps {n} threads, want 4"
    number = list(struct.unpack_from("<4i", data, len(data) - 16))
    assert number != [0, 1, 2, 3], f"rank {r}: the trailer's map is the identity"
    assert sorted(number) == [0, 1, 2, 3] and number[0] == 0, f"rank {r}: map {number}"
print(f"both ranks' trailers map first-call numbers to the trace's: {number}; workers 1-3 are threads "
      f"{[thread_of[w] for w in (1, 2, 3)]}")
PY

if ! "$TF" export t.tf --perfetto t.json 2>export.txt; then
  bad "tracefold export failed"
  show_run export.txt
else
  run_check "export" <<'PY'
import json, sys
sys.path.insert(0, ".")
from common import slept, thread_of, near
ev = [e for e in json.load(open("t.json"))["traceEvents"] if e.get("ph") == "X" and "args" in e]
assert {e["args"]["time"] for e in ev} == {"measured"}, "times not labelled measured"
def calls(pid, tid, op):
    return sorted((e for e in ev if e["pid"] == pid and e["tid"] == tid and e["args"]["op"] == op),
                  key=lambda e: float(e["ts"]))
out = []
for w, t in sorted(thread_of.items()):
    recvs, sends = calls(0, t, "MPI_Recv"), calls(1, t, "MPI_Send")
    assert len(recvs) == w and {e["args"]["tag"] for e in recvs} == {w}, f"rank 0 thread {t}: {len(recvs)} receives"
    assert len(sends) == w, f"rank 1 thread {t}: {len(sends)} sends"
    late = (float(sends[0]["ts"]) - float(recvs[0]["ts"])) * 1e-6
    waited = float(recvs[0]["dur"]) * 1e-6
    assert near(late, slept[w]), f"thread {t} (worker {w}): its send {late:.3f} s after the receive, slept {slept[w]:.3f} s"
    assert waited >= late, f"thread {t}: waited {waited:.3f} s, its send came {late:.3f} s late"
    out.append(f"0.{t} waits {waited:.3f} s (slept {slept[w]:.3f})")
print("; ".join(out))
PY
fi

if ! "$TF" analyze t.tf -o waits.json 2>analyze.txt; then
  bad "tracefold analyze failed"
  show_run analyze.txt
else
  run_check "analyze" <<'PY'
import json, sys
sys.path.insert(0, ".")
from common import slept, thread_of, near
r = json.load(open("waits.json"))
ls = {}
for c in r["severity"]:
    if c["pattern"] == "late_sender":
        ls[c["location"]] = ls.get(c["location"], 0) + c["seconds"]
for w, t in sorted(thread_of.items()):
    got = ls.get(f"0.{t}", 0.0)
    assert near(got, slept[w]), f"Late Sender on 0.{t} (worker {w}): {got:.3f} s, slept {slept[w]:.3f} s"
assert not any("laid out from" in n for n in r["notes"]), r["notes"]
print(", ".join(f"0.{t} {ls[f'0.{t}']:.3f} s" for w, t in sorted(thread_of.items())))
PY
fi

if ! "$TF" stats t.tf --ranks-svg ranks.svg --matrix matrix.csv >stats.txt 2>stats-err.txt; then
  bad "tracefold stats failed"
  show_run stats-err.txt
else
  run_check "stats" <<'PY'
import re, sys
sys.path.insert(0, ".")
from common import slept, thread_of, near
svg = open("ranks.svg").read()
bars = [dict(re.findall(r'data-(\w+)="(\d+)"', m)) | {"class": c}
        for c, m in re.findall(r'<rect class="bar-(\w+)" ([^>]*)>', svg)]
assert len(bars) == 16, f"{len(bars)} bars, want 2 x 8 locations"
order = [(int(b["rank"]), int(b["thread"])) for b in bars if b["class"] == "comm"]
assert order == [(r, t) for r in (0, 1) for t in range(4)], f"bars in order {order}"
labels = re.findall(r'text-anchor="middle">(\d+\.\d+)</text>', svg)
assert labels == [f"{r}.{t}" for r in (0, 1) for t in range(4)], f"labels {labels}"
for w, t in thread_of.items():
    for b in bars:
        if (b["rank"], b["thread"]) == ("0", str(t)):
            assert int(b["calls"]) == 1 + w, f"bar 0.{t} (worker {w}): {b['calls']} calls"
            if b["class"] == "comm":
                assert int(b["ns"]) * 1e-9 >= 0.75 * slept[w], f"bar 0.{t}: {b['ns']} ns in MPI, slept {slept[w]}"
lines = open("matrix.csv").read().split()
assert lines == ["sender,receiver,messages,bytes", "0,1,3,12", "1,0,9,68"], lines
print("a bar per location in rank order, each worker's calls and wait; matrix counts every thread's sends")
PY
fi

if ! "$TF" report t.tf -o report.html 2>report-err.txt; then
  bad "tracefold report failed"
  show_run report-err.txt
else
  run_check "report" <<'PY'
import re, sys
sys.path.insert(0, ".")
from common import thread_of
html = open("report.html").read()
assert "<td>threads calling MPI</td><td>8 (rank, thread) locations, up to 4 a rank</td>" in html, "summary row"
for w, t in thread_of.items():
    assert re.search(rf'data-rank="0" data-thread="{t}" data-calls="{1 + w}"', html), f"bar 0.{t}"
# Every worker's receives are one call site: 6 calls on thread T of rank 0.
row = re.search(r"<tr><td>MPI_Recv</td><td class=\"site\">[^<]*</td><td>([^<]*)</td><td[^>]*>(\d+)</td>", html)
assert row, "no MPI_Recv row"
assert row.group(1) == "thread 1: 0; thread 2: 0; thread 3: 0" and row.group(2) == "6", row.groups()
heads = re.search(r'<table id="waits-heatmap">.*?</tr>', html, re.S).group(0)
assert all(f"<th>0.{t}</th>" in heads for t in (1, 2, 3)), "analysis locations"
assert 'id="diagnoses"' not in html and "are left out" in html, "diagnosis"
print("summary, bars, call-site locations and analysis per location; diagnosis left out with a note")
PY
fi
finish
