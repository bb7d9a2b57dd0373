#!/usr/bin/env bash
# The commands that take one thread per rank, and how the exports name and
# label a trace with threads (tests/apps/threads.c, 2 ranks of a main
# thread and two workers under MPI_THREAD_MULTIPLE, recorded with its
# timeline):
#  - `simulate` refuses it, saying why it cannot take a rank's threads;
#    `patterns` lists each of the three thread classes (no channel is
#    used by two threads of a rank; tests/mpi/patterns_threads.sh checks
#    the patterns), and `report`'s patterns section has the same patterns,
#    each with its thread class; the two workers run the same code, so
#    their calls share nodes and histograms, and the time shares of their
#    patterns add up to the share of those calls (`stats`), not twice it
#    (on a copy whose main thread's calls take 1 ns, so that the workers'
#    calls hold most of the time and the shares tell the two apart);
#    `resolve` walks every thread's stream and leaves this trace, which
#    has no wildcard, as it was;
#  - `stats --ranks-svg` labels its time axis by where the times come
#    from: recorded beside the timeline, sums of means without it;
#  - OTF2 names every location `rank R thread T`, thread 0 too, as the
#    bars' tooltips name them.
# None of these looks at a measured time, so the recording needs no
# yielding waits (record_threads, not record_timed_threads) and the test
# runs under MPICH too.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
record_threads 2 threads 20

# refused CMD WHY ARGS...: the command exits 2 naming itself, WHY and the
# threads.
refused() {
  local cmd=$1 why=$2
  shift 2
  CHECKS=$((CHECKS + 1))
  local rc=0
  "$TF" "$cmd" "$@" >"$cmd-out.txt" 2>"$cmd-err.txt" || rc=$?
  if [[ $rc -ne 2 ]]; then
    bad "$cmd exited $rc on a trace with threads, want 2"
    show_run "$cmd-out.txt" "$cmd-err.txt"
  elif ! grep -qF "$cmd takes traces of one thread per rank ($why" "$cmd-err.txt" ||
    ! grep -qF "this one has 3 threads per rank calling MPI" "$cmd-err.txt"; then
    bad "$cmd's refusal does not say why ($why ...) and how many threads"
    show_run "$cmd-err.txt"
  else
    ok "$cmd refused: $(cat "$cmd-err.txt")"
  fi
}
CHECKS=$((CHECKS + 1))
if ! "$TF" patterns t.tf >patterns-out.txt 2>patterns-err.txt; then
  bad "patterns failed on a trace with threads"
  show_run patterns-out.txt patterns-err.txt
elif [[ $(grep -c '^thread class [0-2] of 3$' patterns-out.txt) -ne 3 ]]; then
  bad "patterns should list the three thread classes"
  show_run patterns-out.txt
else
  ok "patterns lists each thread class"
fi
CHECKS=$((CHECKS + 1))
if ! "$TF" resolve --align t.tf -o resolved.tf >resolve-out.txt 2>resolve-err.txt; then
  bad "resolve failed on a trace with threads"
  show_run resolve-out.txt resolve-err.txt
elif ! "$TF" diff t.tf resolved.tf >resolve-diff.txt 2>&1; then
  bad "resolve changed a trace without wildcards"
  show_run resolve-diff.txt
else
  ok "resolve walks the threads: $(tr '\n' ' ' <resolve-err.txt)"
fi
refused simulate "SimGrid's SMPI replay runs one actor per rank" t.tf -o sim

CHECKS=$((CHECKS + 1))
# The main thread's calls (every node of 2 calls) at 1 ns each: the
# workers' calls, 40 a thread, then hold most of the time in MPI calls.
"$TF" convert --text t.tf -o t.txt 2>/dev/null || bad "convert --text"
sed 's/^    comm n=2 .*/    comm n=2 sum=2 min=1@0 max=1@1 bins=0:2:1:1:2/' t.txt >even.tf
if ! "$TF" report even.tf -o r.html 2>report-err.txt; then
  bad "report failed"
  show_run report-err.txt
elif ! "$TF" patterns --json even.tf >patterns.json 2>patterns-err.txt ||
  ! "$TF" stats --json even.tf >stats.json 2>stats-err.txt; then
  bad "patterns --json or stats --json failed"
  show_run patterns-err.txt stats-err.txt
elif ! python3 - patterns.json stats.json r.html >report-check.txt 2>&1 <<'PY'; then
import json, re, sys
classes = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
html = open(sys.argv[3]).read()
section = html.split("<h2>Communication patterns</h2>", 1)[1].split("<h2>", 1)[0]
assert '<table id="patterns">' in section, re.findall(r'<p id="patterns"[^<]*', section)
table = section.split('<table id="patterns">', 1)[1].split("</table>", 1)[0]
got = []
for r in re.findall(r'<tr class="pattern[^"]*">(.*?)</tr>', table, re.S):
    nums = re.findall(r'<td class="num[^"]*">([^<]*)</td>', r)
    title = re.findall(r'<b class="pattern-title">([^<]*)</b>', r)[0]
    got.append((int(nums[0]), title, float(nums[4].rstrip(" %"))))
want = sorted((k, g["shape"]["title"]) for k, c in enumerate(classes) for g in c["global"])
assert sorted(g[:2] for g in got) == want, (got, want)
# Every pattern is the workers' MPI_Sendrecv: their shares add up to its.
sendrecv = 100 * sum(r["time_share"] for r in stats["rows"] if r["op"] == "MPI_Sendrecv")
assert sendrecv >= 5, "MPI_Sendrecv has %.1f %% of the time in MPI calls" % sendrecv
total = sum(g[2] for g in got)
assert abs(total - sendrecv) <= 0.05 * len(got) + 0.05, (got, sendrecv)
print("; ".join("thread %d %s %.1f %%" % g for g in got), "= MPI_Sendrecv %.1f %%" % sendrecv)
PY
  bad "report's patterns section differs from patterns per thread class"
  cat report-check.txt >&2
else
  ok "report's patterns per thread class: $(cat report-check.txt)"
fi

# axis_label SVG: the ranks chart's time axis.
axis_label() { sed -n 's/.*class="axis-time">\([^<]*\)<.*/\1/p' "$1"; }
CHECKS=$((CHECKS + 1))
"$TF" stats t.tf --ranks-svg recorded.svg >/dev/null 2>stats-err.txt || bad "stats --ranks-svg"
cp t.tf alone.tf  # no alone.tf.timeline/: times from the trace's means
"$TF" stats alone.tf --ranks-svg means.svg >/dev/null 2>>stats-err.txt || bad "stats --ranks-svg"
got_recorded=$(axis_label recorded.svg)
got_means=$(axis_label means.svg)
if [[ $got_recorded != "time (recorded)" || $got_means != "time (sum of means)" ]]; then
  bad "ranks chart axis: '$got_recorded' with the timeline, '$got_means' without"
  show_run stats-err.txt
else
  ok "ranks chart axis: '$got_recorded' with the timeline, '$got_means' without"
fi

CHECKS=$((CHECKS + 1))
if ! command -v otf2-print >/dev/null; then
  bad "otf2-print missing (scripts/install-deps.sh installs otf2-tools)"
elif ! "$TF" export t.tf --otf2 otf2 2>export-err.txt; then
  bad "export --otf2 failed"
  show_run export-err.txt
else
  otf2-print -G otf2/traces.otf2 >defs.txt 2>&1 || bad "otf2-print -G"
  missing=""
  for r in 0 1; do
    for t in 0 1 2; do
      grep -qF "\"rank $r thread $t\"" defs.txt || missing+=" rank $r thread $t;"
    done
  done
  if [[ -n $missing ]] || grep -q "main thread" defs.txt; then
    bad "OTF2 location names: missing$missing $(grep -c 'main thread' defs.txt) 'main thread'"
    grep -i "location " defs.txt | head -n 8 >&2
  else
    ok "OTF2 names every location rank R thread T"
  fi
fi
finish
