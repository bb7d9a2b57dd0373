#!/usr/bin/env bash
# Progress lines of long commands (issue 17, item 5): with
# TRACEFOLD_PROGRESS=1 export (Perfetto, OTF2), symbolize and merge report
# their steps on stderr up to 100%; without it, and with stderr not a
# terminal, they print none; and progress never changes what is written.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

run_expect 0 "$TRACEFOLD" fold "$SRC/examples/stencil2d-rawlog" -o "$WORK/s.tf"

# Export, quiet (stderr is a file here) and forced.
run_expect 0 "$TRACEFOLD" export "$WORK/s.tf" --perfetto "$WORK/quiet.json"
[[ $ERR != *"tracefold: exporting"* ]] || fail "export printed progress to a file: $ERR"
TRACEFOLD_PROGRESS=1 run_expect 0 "$TRACEFOLD" export "$WORK/s.tf" --perfetto "$WORK/loud.json" \
  --otf2 "$WORK/otf2"
expect_in "$ERR" "tracefold: exporting $WORK/loud.json: rank 0/16 (0%)" "perfetto progress start"
expect_in "$ERR" "tracefold: exporting $WORK/loud.json: rank 16/16 (100%)" "perfetto progress end"
expect_in "$ERR" "tracefold: exporting $WORK/otf2: rank 16/16 (100%)" "otf2 progress end"
lines=$(grep -c "exporting $WORK/loud.json" <<<"$ERR")
((lines >= 2 && lines <= 11)) || fail "perfetto progress: $lines lines, expected one per tenth"
cmp -s "$WORK/quiet.json" "$WORK/loud.json" || fail "progress changed the Perfetto output"

# TRACEFOLD_PROGRESS=0 is quiet too.
TRACEFOLD_PROGRESS=0 run_expect 0 "$TRACEFOLD" export "$WORK/s.tf" --perfetto "$WORK/zero.json"
[[ $ERR != *"tracefold: exporting"* ]] || fail "TRACEFOLD_PROGRESS=0 printed progress: $ERR"

# Symbolize: one step per distinct frame (the binaries are gone, so the
# frames stay unknown, and the walk still reports every one).
frames=$("$TRACEFOLD" symbolize "$WORK/s.tf" -o "$WORK/sym-quiet.tf" 2>&1 |
  sed -n 's/.*symbolized .*: \([0-9]*\) frames.*/\1/p')
[[ -n $frames && $frames -gt 0 ]] || fail "symbolize reported no frames"
TRACEFOLD_PROGRESS=1 run_expect 0 "$TRACEFOLD" symbolize "$WORK/s.tf" -o "$WORK/sym.tf"
expect_in "$ERR" "tracefold: symbolizing $WORK/s.tf: frame $frames/$frames (100%)" "symbolize progress"
cmp -s "$WORK/sym-quiet.tf" "$WORK/sym.tf" || fail "progress changed the symbolized trace"

# Merge of a directory of partial traces: reading and merging steps.
TRACEFOLD_PROGRESS=1 run_expect 0 "$TRACEFOLD" merge "$SRC/examples/pingpong-partial" \
  -o "$WORK/m.tf"
expect_in "$ERR" "tracefold: reading $SRC/examples/pingpong-partial 2/2 (100%)" "merge reading"
expect_in "$ERR" "tracefold: merging traces 2/2 (100%)" "merge progress"
echo "ok: progress of export, symbolize and merge"
