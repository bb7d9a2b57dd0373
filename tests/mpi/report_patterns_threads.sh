#!/usr/bin/env bash
# The HTML report's "Communication patterns" section on a trace with two
# threads per rank (tests/apps/thread_patterns.c at 4 ranks: a token ring
# on the main threads, a periodic 1-D halo on the second threads), rendered
# by Chromium. The section analyses each thread class alone, as `tracefold
# patterns` does: its rows are the command's global patterns of every class
# (shape, ranks, messages, read from `patterns --json` on the same trace),
# each with its class in a thread column, most bytes first (the halo's 32
# messages before the ring's 16); the time shares of the classes add up to
# at most the run's time in MPI calls. With `shared` (the halo on the
# ring's tag) the command refuses the trace, and the section gives its
# reason, naming the rank, threads and channel.
source "$2/tests/apps/patterns_lib.bash"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || fail "chromium not found (scripts/install-deps.sh installs it)"


# dom NAME: NAME.html as Chromium parses it, into NAME.dom.
dom() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$PWD/profile" --dump-dom "file://$PWD/$1.html" > "$1.dom" 2> /dev/null ||
    fail "chromium --dump-dom $1.html"
}

thread_patterns own
"$TF" patterns --json own.tf > own.json || fail "patterns --json on two threads per rank"
"$TF" report own.tf -o own.html 2> own-report.err || {
  cat own-report.err >&2
  fail "report"
}
dom own
python3 - own.json own.dom <<'PY' || fail "the report's patterns of a trace with threads"
import json, re, sys
classes = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
h2 = re.findall(r"<h2>([^<]*)</h2>", dom)
assert "Communication patterns" in h2, h2
section = dom.split("<h2>Communication patterns</h2>", 1)[1].split("<h2>", 1)[0]
assert "The pattern analysis failed" not in section, section[:600]
assert "2 threads per rank calling MPI" in section, "no note on the thread classes"
assert '<table id="patterns">' in section, section[:600]
table = section.split('<table id="patterns">', 1)[1].split("</table>", 1)[0]
heads = re.findall(r"<th[^>]*>([^<]*)</th>", table)
assert heads[:3] == ["#", "thread", "pattern"], heads
rows = re.findall(r'<tr class="pattern[^"]*">(.*?)</tr>', table, re.S)
got = []
for r in rows:
    thread = re.findall(r'<td class="num pattern-thread">(\d+)</td>', r)
    title = re.findall(r'<b class="pattern-title">([^<]*)</b>', r)
    ranks = re.findall(r'<td class="pattern-ranks">([^<]*)</td>', r)
    nums = re.findall(r'<td class="num">([^<]*)</td>', r)
    assert len(thread) == 1 and len(title) == 1 and len(ranks) == 1 and len(nums) >= 4, r[:400]
    dots = re.findall(r'<circle class="rank" data-rank="(\d+)"', r)
    assert sorted(map(int, dots)) == list(range(4)), dots
    share = None if nums[3] == "-" else float(nums[3].rstrip(" %"))
    got.append((int(thread[0]), title[0], ranks[0], int(nums[1]), share))
# What `tracefold patterns` finds per class, each class's global patterns.
want = sorted((k, g["shape"]["title"], g["ranks"], g["messages"])
              for k, c in enumerate(classes) for g in c["global"])
assert sorted(g[:4] for g in got) == want, (got, want)
# Both classes are in it, with their own shapes.
assert {g[0] for g in got} == {0, 1}, got
# Most bytes first: every message is one int, so most messages first.
assert [g[3] for g in got] == sorted((g[3] for g in got), reverse=True), got
shares = [g[4] for g in got if g[4] is not None]
assert len(shares) == len(got), "a pattern without its time share: %s" % got
assert sum(shares) <= 100.05, "the classes' time shares add up to %.1f %%" % sum(shares)
print("report: " + "; ".join("thread %d %s ranks %s, %d messages, %.1f %%" % g for g in got))
PY

thread_patterns shared shared
"$TF" report shared.tf -o shared.html 2> shared-report.err || {
  cat shared-report.err >&2
  fail "report of the trace whose threads share a channel"
}
dom shared
section=$(sed -n '/<h2>Communication patterns<\/h2>/,/<h2>/p' shared.dom)
grep -o '<p id="patterns"[^<]*' <<< "$section"
grep -Eq '<p id="patterns" class="note">The pattern analysis failed: patterns per thread class need each channel on one thread of a rank: rank [0-3] threads 0 and 1 both use communicator 0, peer [0-3], tag 1 ' <<< "$section" ||
  fail "the section should give the refusal of patterns, naming rank, threads and channel"
! grep -q '<table id="patterns">' <<< "$section" || fail "a refused analysis should give no table"
echo "PASS"
