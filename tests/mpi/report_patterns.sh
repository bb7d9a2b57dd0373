#!/usr/bin/env bash
# The HTML report's "Communication patterns" section, rendered by Chromium:
# stencil2d not periodic on 6 ranks (3 rows of 2) gives one pattern, the
# 2-D halo 3x2, listed after the time by operation, with ranks written
# 0–5 and a picture of 6 rank dots on the grid and its 14 edges as arrows;
# with --no-patterns the section is left out and the others stay.
source "$2/tests/apps/patterns_lib.bash"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || fail "chromium not found (scripts/install-deps.sh installs it)"

shapes stencil2d_nonperiodic 6 3
"$TF" report stencil2d_nonperiodic-6.tf -o r.html 2> report.err || {
  cat report.err >&2
  fail "report"
}
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$PWD/profile" --dump-dom "file://$PWD/r.html" > dom.html 2> /dev/null ||
  fail "chromium --dump-dom"
python3 - dom.html <<'PY' || fail "report DOM"
import re, sys
dom = open(sys.argv[1]).read()
h2 = re.findall(r"<h2>([^<]*)</h2>", dom)
assert "Communication patterns" in h2, h2
assert h2.index("Time by operation") < h2.index("Communication patterns") < h2.index("Communication"), h2
section = dom.split("<h2>Communication patterns</h2>", 1)[1].split("<h2>", 1)[0]
table = section.split('<table id="patterns">', 1)[1].split("</table>", 1)[0]
rows = re.findall(r'<tr class="pattern[^"]*">(.*?)</tr>', table, re.S)
assert len(rows) >= 1, "no pattern rows"
titles = re.findall(r'<b class="pattern-title">([^<]*)</b>', table)
assert titles[0] == "2-D halo", titles
params = re.findall(r'<span class="params">([^<]*)</span>', rows[0])
assert params and params[0].startswith("grid 3x2; periodic none; neighbours 5-point"), params
assert len(re.findall(r"<svg", table)) == len(rows), "one picture per pattern"
for r in rows:
    dots = re.findall(r'<circle class="rank" data-rank="(\d+)"', r)
    assert sorted(map(int, dots)) == list(range(6)), dots
ranks = re.findall(r'<td class="pattern-ranks">([^<]*)</td>', rows[0])
assert ranks == ["0\u20135"], ranks
arrows = len(re.findall(r'<line class="edge"', rows[0]))
assert arrows == 14, arrows
assert "stencil2d.c:" in rows[0], "no file:line of the pattern's call sites"
print("report: %d patterns, first %s (%s), %d arrows" % (len(rows), titles[0], params[0], arrows))
PY
# --no-patterns: the same page without the section (and without running
# the analysis), the sections around it kept.
"$TF" report stencil2d_nonperiodic-6.tf -o n.html --no-patterns 2> n.err || {
  cat n.err >&2
  fail "report --no-patterns"
}
grep -q '<h2>Communication patterns</h2>' r.html || fail "the full report has no patterns heading"
! grep -q '<h2>Communication patterns</h2>' n.html || fail "--no-patterns kept the patterns section"
! grep -q 'id="patterns"' n.html || fail "--no-patterns kept the patterns table"
grep -q '<h2>Time by operation</h2>' n.html || fail "--no-patterns lost the time by operation"
echo "PASS"
