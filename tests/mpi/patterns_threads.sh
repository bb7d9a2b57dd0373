#!/usr/bin/env bash
# tracefold patterns on a trace with two threads per rank
# (tests/apps/thread_patterns.c): the main threads pass a token round a
# ring, the second threads do a periodic 1-D halo, at the same time. No
# channel is used by both threads of a rank, so each thread class is
# analysed alone and reported under its own heading: a ring, then a 1-D
# halo. With `shared` the halo uses the ring's tag: the command refuses,
# naming the communicator, peer, tag, rank and both threads.
source "$2/tests/apps/patterns_lib.bash"

thread_patterns own
"$TF" patterns own.tf > own.txt 2> own.err || { cat own.err >&2; fail "patterns on two threads per rank"; }
cut -c1-160 own.txt
expect own.txt 'thread class 0 of 2'
expect own.txt 'thread class 1 of 2'
# Each class's global patterns: exactly one, of all four ranks, and its shape.
python3 - own.txt <<'PY' || fail "per-class patterns"
import re, sys
classes, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"thread class (\d+) of 2$", line)
    if m:
        cur = int(m.group(1)); classes[cur] = []; continue
    m = re.match(r"  G\d+: patterns of ranks (\S+),", line)
    if m: classes[cur].append([m.group(1), None])
    m = re.match(r"    shape: ([^,]+), quality", line)
    if m: classes[cur][-1][1] = m.group(1)
want = {0: [["0–3", "ring"]], 1: [["0–3", "1-D halo"]]}
if classes != want:
    sys.exit(f"classes {classes}, expected {want}")
PY
# The JSON form: one object per class, in class order.
"$TF" patterns --json own.tf > own.json || fail "patterns --json on two threads per rank"
python3 - own.json <<'PY' || fail "per-class JSON"
import json, sys
d = json.load(open(sys.argv[1]))
shapes = [[g["shape"]["name"] for g in c["global"]] for c in d]
if shapes != [["ring"], ["1-D halo"]]:
    sys.exit(f"shapes {shapes}, expected [['ring'], ['1-D halo']]")
PY
# --truth compares one pattern list: it takes one thread per rank.
rc=0
"$TF" patterns --truth "$2/tests/mpi/patterns_truth/ring-5.truth" own.tf > /dev/null 2> truth.err || rc=$?
[[ $rc -ne 0 ]] && grep -q "threads per rank" truth.err ||
  fail "--truth on two threads per rank should be refused: rc $rc, $(cat truth.err)"

thread_patterns shared shared
rc=0
"$TF" patterns shared.tf > shared.txt 2> shared.err || rc=$?
cat shared.err
[[ $rc -ne 0 ]] || fail "threads sharing a channel should be refused"
grep -Eq "rank [0-3] threads 0 and 1 both use communicator 0, peer [0-3], tag 1 " shared.err ||
  fail "the refusal should name the rank, both threads, communicator, peer and tag"
echo "ok"
