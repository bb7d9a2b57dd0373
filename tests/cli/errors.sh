#!/usr/bin/env bash
# Bad input gives exit 2 and an error naming the place: FILE:LINE for corrupt
# traces and raw logs, the missing file for an incomplete raw-log directory.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

gen_logs "$WORK/logs" 10
run_expect 0 "$TRACEFOLD" fold --text "$WORK/logs" -o "$WORK/t.trace"

# expect_trace_error FILE LINE : every reader fails with exit 2 and FILE:LINE.
expect_trace_error() {
  local file=$1 line=$2 cmd
  local -a words
  for cmd in "print" "stats" "stats --json" "expand -r 0" "diff $WORK/logs"; do
    read -r -a words <<<"$cmd"
    run_expect 2 "$TRACEFOLD" "${words[0]}" "$file" "${words[@]:1}"
    expect_in "$ERR" "$file:$line: " "$cmd on $(basename "$file")"
    expect_in "$ERR" "error" "$cmd on $(basename "$file")"
    [[ -z "$OUT" ]] || fail "$cmd printed output for a corrupt trace: $OUT"
  done
}

# A bad number in the world line (line 2).
sed 's/^world 4$/world four/' "$WORK/t.trace" >"$WORK/world.trace"
expect_trace_error "$WORK/world.trace" 2

# An unknown operation on a node line.
n=$(grep -n '^node 2 ' "$WORK/t.trace" | cut -d: -f1)
sed "${n}s/ MPI_[A-Za-z]* / MPI_Nonsense /" "$WORK/t.trace" >"$WORK/op.trace"
expect_trace_error "$WORK/op.trace" "$n"
expect_in "$ERR" "MPI_Nonsense" "unknown op message"

# A bad ranklist (node 1 is run by all ranks: written "ranks=*").
n=$(grep -n '^node 1 ' "$WORK/t.trace" | cut -d: -f1)
sed "${n}s/ranks=\*$/ranks=<1 0 4/" "$WORK/t.trace" >"$WORK/ranks.trace"
grep -q 'ranks=<1 0 4$' "$WORK/ranks.trace" || fail "test setup: ranklist not broken"
expect_trace_error "$WORK/ranks.trace" "$n"

# The whole-set shorthand "*" mixed with a ranklist.
sed "${n}s/ranks=\*$/ranks=* <0 1>/" "$WORK/t.trace" >"$WORK/star.trace"
grep -q 'ranks=\* <0 1>$' "$WORK/star.trace" || fail "test setup: star not mixed"
expect_trace_error "$WORK/star.trace" "$n"
expect_in "$ERR" "'*' (the whole set) stands alone" "mixed star message"

# "*" in a version-1 file: first used by the world communicator's line.
# (A folded trace with settled timing may be version 5: `pred=other`; one
# with derived links version 7 or 8, whose `threads`/`omp` lines go too.)
sed -E '1s/^tracefold-trace [2578]$/tracefold-trace 1/; /^(threads|omp) /d' "$WORK/t.trace" >"$WORK/v1star.trace"
n=$(grep -n '^comm 0 members \*$' "$WORK/v1star.trace" | cut -d: -f1)
[[ -n $n ]] || fail "test setup: no 'comm 0 members *'"
expect_trace_error "$WORK/v1star.trace" "$n"
expect_in "$ERR" "needs format version 2" "star in a version-1 file"

# A text format version that does not exist (3 is the compact form).
sed -E '1s/^tracefold-trace [2578]$/tracefold-trace 3/' "$WORK/t.trace" >"$WORK/v3.trace"
expect_trace_error "$WORK/v3.trace" 1
expect_in "$ERR" "unsupported text format version 3" "version 3"

# Truncated in the middle of a line.
total=$(wc -c <"$WORK/t.trace")
head -c $((total / 2)) "$WORK/t.trace" >"$WORK/cut.trace"
lines=$(($(head -c $((total / 2)) "$WORK/t.trace" | wc -l) + 1))
expect_trace_error "$WORK/cut.trace" "$lines"
expect_in "$ERR" "truncated" "truncated trace message"

# Missing 'end'.
sed '$d' "$WORK/t.trace" >"$WORK/noend.trace"
expect_trace_error "$WORK/noend.trace" "$(wc -l <"$WORK/noend.trace")"

# A corrupt .zst file names the file.
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace.zst"
size=$(wc -c <"$WORK/t.trace.zst")
head -c $((size - 8)) "$WORK/t.trace.zst" >"$WORK/cut.trace.zst"
run_expect 2 "$TRACEFOLD" print "$WORK/cut.trace.zst"
expect_in "$ERR" "$WORK/cut.trace.zst" "truncated zstd"

# Not a trace at all.
printf 'hello\n' >"$WORK/hello.trace"
run_expect 2 "$TRACEFOLD" print "$WORK/hello.trace"
expect_in "$ERR" "$WORK/hello.trace:1: " "not a trace"

# The compact form: every reading command names the file and the byte.
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/c.tf"
size=$(wc -c <"$WORK/c.tf")
head -c $((size / 2)) "$WORK/c.tf" >"$WORK/cut.tf"
for sub in print stats expand; do
  if [[ $sub == expand ]]; then run_expect 2 "$TRACEFOLD" expand "$WORK/cut.tf" -r 0; else run_expect 2 "$TRACEFOLD" "$sub" "$WORK/cut.tf"; fi
  expect_in "$ERR" "$WORK/cut.tf: byte $((size / 2)): the file ends inside the compressed body (truncated)" "$sub: cut compact file"
done
run_expect 2 "$TRACEFOLD" diff "$WORK/c.tf" "$WORK/cut.tf"
expect_in "$ERR" "$WORK/cut.tf: byte " "diff: cut compact file"
{ head -c 4 "$WORK/c.tf"; printf '\x0b'; tail -c +6 "$WORK/c.tf"; } >"$WORK/v11.tf"
run_expect 2 "$TRACEFOLD" print "$WORK/v11.tf"
expect_in "$ERR" "$WORK/v11.tf: byte 4: unsupported compact format version 11" "compact version 11"
printf '\x7fELF\x02\x01\x01' >"$WORK/elf.tf"
run_expect 2 "$TRACEFOLD" print "$WORK/elf.tf"
expect_in "$ERR" "$WORK/elf.tf: byte 0: not a tracefold trace" "binary that is no trace"

# An empty file.
: >"$WORK/empty.trace"
run_expect 2 "$TRACEFOLD" stats "$WORK/empty.trace"
expect_in "$ERR" "$WORK/empty.trace:" "empty trace"

# ------------------------------------------------------------- raw logs
# A missing rank file in the middle.
cp -r "$WORK/logs" "$WORK/gap"
rm "$WORK/gap/rank-1.txt"
run_expect 2 "$TRACEFOLD" fold "$WORK/gap" -o "$WORK/gap.trace"
expect_in "$ERR" "rank-1.txt" "missing rank file"
expect_in "$ERR" "missing" "missing rank file"
[[ ! -e "$WORK/gap.trace" ]] || fail "fold wrote output despite an error"

# The last rank file missing: the others declare 4 ranks.
cp -r "$WORK/logs" "$WORK/last"
rm "$WORK/last/rank-3.txt"
run_expect 2 "$TRACEFOLD" fold "$WORK/last" -o "$WORK/last.trace"
expect_in "$ERR" "size 4" "missing last rank file"
expect_in "$ERR" "3 ranks" "missing last rank file"

# An empty directory.
mkdir "$WORK/none"
run_expect 2 "$TRACEFOLD" fold "$WORK/none" -o "$WORK/none.trace"
expect_in "$ERR" "rank-" "empty raw-log directory"

# A bad line in a raw log: FILE:LINE.
cp -r "$WORK/logs" "$WORK/badline"
sed -i '12s/.*/MPI_Isend site=12 peer=9 tag=7 count=16 dsize=8 comm=0/' "$WORK/badline/rank-2.txt"
run_expect 2 "$TRACEFOLD" fold "$WORK/badline" -o "$WORK/bad.trace"
expect_in "$ERR" "$WORK/badline/rank-2.txt:12: " "raw log error location"
expect_in "$ERR" "peer" "raw log error field"
# diff reads the same logs and reports the same place.
run_expect 2 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/badline"
expect_in "$ERR" "rank-2.txt:12: " "diff on a bad raw log"

sed -i '12s/.*/MPI_Jump site=12/' "$WORK/badline/rank-2.txt"
run_expect 2 "$TRACEFOLD" fold "$WORK/badline" -o "$WORK/bad.trace"
expect_in "$ERR" "rank-2.txt:12: " "unknown op in raw log"
expect_in "$ERR" "MPI_Jump" "unknown op in raw log"

# Output into a directory that does not exist.
run_expect 2 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/no/such/dir/t.trace"
expect_in "$ERR" "$WORK/no/such/dir" "unwritable output"

# Missing inputs are usage errors (non-zero), not crashes.
rc=0
"$TRACEFOLD" print "$WORK/does-not-exist.trace" >/dev/null 2>"$WORK/err" || rc=$?
((rc != 0 && rc < 128)) || fail "print of a missing file exited $rc"
grep -q "does-not-exist" "$WORK/err" || fail "print of a missing file does not name it"
echo "errors: ok"
