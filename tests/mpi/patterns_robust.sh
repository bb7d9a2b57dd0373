#!/usr/bin/env bash
# Robustness of `tracefold patterns` (issue 32): the 2-D halo of
# tests/apps/patterns_faults.c on 6 ranks (a 3x2 grid, rank = x + 2y) with
# one dropped edge, one extra message, one helper called from two places
# and one nested repeat. The halo must still be named, a fault must make it
# partial with exactly the injected edge listed (and nothing else), and the
# caller-qualified context, the caller's frame (--context-frame 1) and a
# groups file (--context FILE) must tell the helper's two callers apart or
# join them as asked.
source "$2/tests/apps/patterns_lib.bash"

# run MODE [OPTIONS]: records the program in MODE (once) and lists its
# patterns with OPTIONS into MODE.txt (MODE-caller.txt with --context
# caller, MODE-frame.txt with --context-frame, MODE-groups.txt with a file).
run() {
  local mode=$1 out=$1.txt
  shift
  case "$*" in
    *caller*) out=$mode-caller.txt ;;
    *frame*) out=$mode-frame.txt ;;
    *--context*) out=$mode-groups.txt ;;
  esac
  if [[ ! -s $mode.tf ]]; then
    timeout 300 "$TF" record -o "$mode.tf" -- "$MPIRUN" -np 6 "$APPS/app_patterns_faults" 4 "$mode" \
      > /dev/null 2> "$mode.err" || { cat "$mode.err" >&2; fail "record patterns_faults $mode"; }
  fi
  "$TF" patterns "$@" "$mode.tf" > "$out" || fail "patterns of $mode"
  echo "== $mode $*"
  sed -n '/^global patterns/,$p' "$out" | cut -c1-200
}
# shapes_of FILE: its shape lines and the missing/extra lines under them.
shapes_of() { grep -E '^    shape: |^      (missing|extra) ' "$1"; }
halo='      grid 3x2; periodic none; neighbours 5-point; bytes -x 256, +x 256, -y 256, +y 256'

run clean
expect clean.txt 'global patterns: 1'
expect clean.txt '    shape: 2-D halo, quality 100% (14 of 14 edges)'
expect clean.txt "$halo"

# drop: rank 4 sends nothing to rank 5: the halo less exactly 4->5.
run drop
expect drop.txt 'global patterns: 1'
expect drop.txt "$halo"
[[ $(shapes_of drop.txt) == "$(printf '%s\n' \
  '    shape: 2-D halo, partial (1 edge missing), quality 93% (13 of 14 edges)' \
  '      missing 4->5')" ]] || fail "drop: $(shapes_of drop.txt)"

# extra: rank 0 also sends to rank 5 each step, in the same function: the
# halo plus exactly 0->5 (and its bytes as a direction of their own).
run extra
expect extra.txt 'global patterns: 1'
expect extra.txt '      grid 3x2; periodic none; neighbours 5-point; bytes -x 256, +x 256, -y 256, +y 256, +x-y 256'
[[ $(shapes_of extra.txt) == "$(printf '%s\n' \
  '    shape: 2-D halo, partial (1 edge extra), quality 93% (14 of 15 edges)' \
  '      extra 0->5')" ]] || fail "extra: $(shapes_of extra.txt)"

# helper: face() does every message, called by exchange_x() and
# exchange_y(). By function the two callers are one context, `face`, and
# their union is the halo; by caller they are two contexts, and the
# patterns of each hold only its axis' messages: the x context the pairs
# of a row (0-1, 2-3, 4-5), the y context the columns (0-2-4, 1-3-5).
run helper
expect helper.txt 'global patterns: 1'
expect helper.txt '    shape: 2-D halo, quality 100% (14 of 14 edges)'
grep -q '^  #[0-9]* in face: ' helper.txt || fail "helper: no pattern in context face"
run helper --context caller
for ctx in 'face < exchange_x' 'face < exchange_y'; do
  [[ $(grep -c "^  #[0-9]* in $ctx: " helper-caller.txt) == 6 ]] ||
    fail "helper: not every rank has a pattern in '$ctx'"
done
"$TF" patterns --context caller --json helper.tf > helper.json
python3 - helper.json << 'EOF' || fail "helper: the callers' global patterns mix their axes"
import json, sys
j = json.load(open(sys.argv[1]))
# Each global pattern holds one axis' edges only (x: ranks 1 apart, y: 2).
edges = {"face < exchange_x": set(), "face < exchange_y": set()}
for g in j["global"]:
    es = {tuple(e) for e in g["edges"]}
    x = all(abs(a - b) == 1 for a, b in es)
    y = all(abs(a - b) == 2 for a, b in es)
    assert x != y, g
    edges["face < exchange_x" if x else "face < exchange_y"] |= es
assert edges["face < exchange_x"] == {(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4)}, edges
assert edges["face < exchange_y"] == {(0, 2), (2, 0), (2, 4), (4, 2), (1, 3), (3, 1), (3, 5), (5, 3)}, edges
names = sorted(g["shape"]["title"] for g in j["global"])
assert names == ["irregular neighbourhood"] * 2 + ["pairwise"] * 3, names
EOF

# The helper by the k-th frame and by groups of functions: frame 1 is the
# caller (exchange_x, exchange_y; main's own Allreduce stays in main); a
# group of both callers joins their messages into the halo again.
run helper --context-frame 1
expect helper-frame.txt 'patterns of helper.tf: 6 ranks, context frame 1, peers relative'
for ctx in exchange_x exchange_y; do
  [[ $(grep -c "^  #[0-9]* in $ctx: " helper-frame.txt) == 6 ]] ||
    fail "helper, frame 1: not every rank has a pattern in '$ctx'"
done
[[ $(sed -n '/^global/,$p' helper-frame.txt) == "$(sed -n '/^global/,$p' helper-caller.txt)" ]] ||
  fail "helper: --context-frame 1 and --context caller differ in their global patterns"
printf '# both axes of the halo\ngroup halo\n  exchange_x\n  exchange_y\n' > groups.txt
run helper --context groups.txt
expect helper-groups.txt 'patterns of helper.tf: 6 ranks, context groups groups.txt, peers relative'
expect helper-groups.txt 'global patterns: 1'
expect helper-groups.txt '    shape: 2-D halo, quality 100% (14 of 14 edges)'
[[ $(grep -c '^  #[0-9]* in halo: ' helper-groups.txt) == 6 ]] || fail "helper: no pattern in group halo"
# A bad groups file: exit 2, the file and line named; so is a --context
# that is neither a mode nor a file.
printf 'group a\n  f\ngroup b\n  f\n' > bad.txt
rc=0
"$TF" patterns --context bad.txt helper.tf > bad.out 2> bad.err || rc=$?
[[ $rc == 2 ]] && grep -qF "bad.txt:4: function 'f' is already in group 'a'" bad.err ||
  fail "bad groups file: exit $rc, $(cat bad.err)"
rc=0
"$TF" patterns --context nosuch helper.tf > bad.out 2> bad.err || rc=$?
[[ $rc == 2 ]] && grep -qF "neither 'function', 'caller' nor a groups file" bad.err ||
  fail "--context nosuch: exit $rc, $(cat bad.err)"

# nested: step s runs the exchange 1 + s % 3 times, so the exchange repeats
# inside the repeat of a step: the shorter repeat's events join the longer
# one's global pattern, one whole halo, named, not partial.
run nested
expect nested.txt "$halo"
expect nested.txt 'global patterns: 1'
n=$(grep -c '^    shape: ' nested.txt)
[[ $n -ge 1 && $(grep -c '^    shape: 2-D halo, quality 100% (14 of 14 edges)$' nested.txt) == "$n" ]] ||
  fail "nested: $(shapes_of nested.txt)"
grep -q partial nested.txt && fail "nested: a shape came out partial"
echo "ok"
