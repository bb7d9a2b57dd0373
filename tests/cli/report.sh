#!/usr/bin/env bash
# `tracefold report`: one self-contained HTML page. Headless Chromium
# renders it: the screenshot is not blank and shows the heatmap and the bar
# chart, and the DOM holds the summary, the call-site table, the heatmap
# with one cell per communicating pair and the per-rank chart.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
CHECK="$SRC/tests/data/export_checks.py"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || fail "chromium not found (scripts/install-deps.sh installs it)"

run_expect 0 "$TRACEFOLD" fold "$SRC/examples/stencil2d-rawlog" -o "$WORK/stencil.tf"
run_expect 0 "$TRACEFOLD" report "$WORK/stencil.tf" -o "$WORK/report.html"
expect_in "$ERR" "wrote $WORK/report.html" "report message"
HTML=$(cat "$WORK/report.html")
# Self-contained: no external scripts, styles, images or fonts.
if grep -Eiq '(src|href)="(https?:)?//|@import|url\((https?:)?//' "$WORK/report.html"; then
  fail "report refers to external resources"
fi
expect_in "$HTML" "<svg" "inline SVG"

# Chromium, each run with its own profile (tests run in parallel). The
# screenshot is tall enough to reach the per-rank chart below the patterns.
chrome() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$WORK/profile-$1" "${@:2}"
}
chrome dom --dump-dom "file://$WORK/report.html" >"$WORK/dom.html" 2>"$WORK/chrome-dom.err" ||
  { cat "$WORK/chrome-dom.err" >&2; fail "chromium --dump-dom failed"; }
python3 - "$WORK/dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
for needle in ('id="summary"', 'id="callsites"', 'id="comm-matrix"', 'id="rank-times"', 'id="pairs"'):
    assert needle in dom, "DOM lacks " + needle
# The call-site table: one row per operation of the trace.
table = dom.split('id="callsites"', 1)[1].split("</table>", 1)[0]
ops = re.findall(r"<tr><td>(MPI_\w+)</td>", table)
assert sorted(ops) == sorted(["MPI_Init", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce",
                              "MPI_Finalize"]), ops
# The heatmap: the 48 neighbour pairs of a 4x4 grid.
cells = re.findall(r'class="cell" data-sender="(\d+)" data-receiver="(\d+)"', dom)
assert len(cells) == 48, len(cells)
for s, r in cells:
    s, r = int(s), int(r)
    assert abs(s // 4 - r // 4) + abs(s % 4 - r % 4) == 1, (s, r)
bars = re.findall(r'class="bar-(compute|comm)" data-rank="(\d+)"', dom)
assert len(bars) == 32, len(bars)
print("dom ok")
PY
chrome shot --window-size=1280,2400 --screenshot="$WORK/shot.png" "file://$WORK/report.html" \
  >"$WORK/chrome-shot.out" 2>&1 || { cat "$WORK/chrome-shot.out" >&2; fail "chromium --screenshot failed"; }
[[ -s $WORK/shot.png ]] || fail "no screenshot written"
python3 "$CHECK" screenshot "$WORK/shot.png" || fail "screenshot checks"

run_expect 2 "$TRACEFOLD" report "$WORK/stencil.tf"
run_expect 2 "$TRACEFOLD" report "$WORK/stencil.tf" -o "$WORK/no/such/dir/r.html"
expect_in "$ERR" "cannot write" "report to a missing directory"
echo "report: ok"
