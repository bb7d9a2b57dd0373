#!/usr/bin/env bash
# The clang front end (libtracefold_memrt) on strided.c built with clang-16's
# load/store callbacks (strided_cov): 4 worker threads, each sweeping its own
# static region of M lines twice, one 8-byte load per line, in the reverse
# of their creation order (so numbering by first record would be caught).
#  - five streams (main + 4 workers, by creation order), each worker with
#    exactly 2M loads in `sweep`;
#  - START/STOP and TRACEFOLD_MEM_RECORD_AT_START=no leave main's fill loop
#    out;
#  - the same binary under the Valgrind tool (the runtime idle): per thread,
#    the accesses in `sweep` that both front ends see (loads and stores of
#    the IR, that is every access but the stack's: spills, saved registers
#    and return addresses exist only in machine code) are the same sequence
#    of direction, size, raw address, kind and normalised offset;
#  - memreplay --cache with a private L1 per thread: the sweep load misses
#    once per line with a 32 KiB L1 (M = 256 lines fit), on every access
#    with an 8 KiB one (they do not, and LRU loses each line before reuse);
#  - main's stack accesses normalise alike when the environment moves them;
#  - %q{VAR} in TRACEFOLD_MEM_DIR expands (a missing VAR is refused), and a
#    directory that cannot be written stops the program with a message.
TFM=$1 SRC=$2 K=$3 TF=$4
source "$SRC/tests/memtrace/memtrace_lib.bash"
T=4 M=256
BIN=$K/strided_cov
if [[ ! -x $BIN ]]; then
  echo "FAIL: $BIN was not built: install the Debian package clang-16 (scripts/install-deps.sh" \
    "does) and re-run cmake" >&2
  exit 1
fi
read -r LO HI < <(sym "$BIN" sweep)
# awk (mawk on Debian) has no strtonum: hexadecimal by hand.
HEX='function hex(s, i, n) { n = 0; for (i = 1; i <= length(s); i++)
  n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }'
field() { sed "s/.* $1=\([^ ]*\).*/\1/" <<<" $2"; }

timeout 60 "$BIN" $T $M >native.txt 2>native.err || bad "kernel failed natively"
[[ ! -s native.err ]] && ok "silent without TRACEFOLD_MEM_DIR" || bad "stderr: $(cat native.err)"

mkdir clang
RC=0
TRACEFOLD_MEM_DIR=clang timeout 60 "$BIN" $T $M >out.txt 2>err.txt || RC=$?
[[ $RC == 0 ]] && cmp -s native.txt out.txt && ok "output and status unchanged" \
  || bad "run exited $RC, output $(cat out.txt) $(cat err.txt)"
want=$(echo contexts.bin; echo modules.bin; for ((k = 0; k <= T; k++)); do echo "thread-$k.bin"; done)
[[ $(ls clang) == "$want" ]] && ok "$((T + 1)) streams" || bad "streams: $(ls clang | tr '\n' ' ')"
grep -q "tracefold-memrt: $((T + 1)) threads," err.txt && ok "summary: $(cat err.txt)" \
  || bad "summary: $(cat err.txt)"
for ((k = 0; k <= T; k++)); do
  c=$(rawcount clang/thread-$k.bin "$LO" "$HI") || { bad "thread-$k.bin unreadable"; continue; }
  wl=$((k ? 2 * M : 0))
  [[ $(field thread "$c") == "$k" && $(field in_loads "$c") == "$wl" &&
    $(field in_stores "$c") == 0 ]] && ok "thread $k: $wl loads in sweep" \
    || bad "thread $k: $c; want thread=$k in_loads=$wl in_stores=0"
done
# Main's fill loop stores T*M doubles before START: recorded by default,
# not with TRACEFOLD_MEM_RECORD_AT_START=no.
s0=$(field stores "$(rawcount clang/thread-0.bin)")
((s0 >= T * M)) && ok "default: fill loop recorded ($s0 stores)" || bad "default: $s0 stores"
mkdir startstop
TRACEFOLD_MEM_RECORD_AT_START=no TRACEFOLD_MEM_DIR=startstop timeout 60 "$BIN" $T $M \
  >/dev/null 2>&1 || bad "start/stop run failed"
s0=$(field stores "$(rawcount startstop/thread-0.bin)")
w1=$(field in_loads "$(rawcount startstop/thread-1.bin "$LO" "$HI")")
((s0 < T * M)) && [[ $w1 == $((2 * M)) ]] && ok "START/STOP: $s0 stores in main, $w1 loads in sweep" \
  || bad "START/STOP: $s0 stores in main, $w1 loads in thread 1's sweep"

# The same binary under tracefold-mem (TRACEFOLD_MEM_DIR unset: the runtime
# records nothing, its callbacks return at once and are library code).
mkdir vg
tfm vgout.txt vgerr.txt -q --record-at-start=no --raw-log=vg "$BIN" $T $M
[[ $RC == 0 ]] || bad "tool run exited $RC: $(tail -3 vgerr.txt)"
# thread dir: direction size daddr kind offset, of sweep's non-stack accesses.
shared() {
  "$TF" memreplay "$1" --raw --interleave 0 |
    awk -v lo="$LO" -v hi="$HI" "$HEX"'NR > 1 { i = hex($2) }
      NR > 1 && i >= lo && i < hi && $8 != "stack" { print $1, $5, $4, $6, $8, $12 }'
}
shared clang >clang.txt || bad "memreplay --raw failed on the clang log"
shared vg >vg.txt || bad "memreplay --raw failed on the tool's log"
n=$(wc -l <clang.txt)
if [[ $n == $((2 * T * M)) ]] && cmp -s clang.txt vg.txt; then
  ok "both front ends: the same $n accesses in sweep ($(head -1 clang.txt))"
else
  bad "front ends differ in sweep: $n lines from clang, $(wc -l <vg.txt) from Valgrind;" \
    "$(diff clang.txt vg.txt | head -4 | tr '\n' ' ')"
fi

# Cache misses of the sweep load (the only site in sweep), private L1s.
site() {
  "$TF" memreplay startstop --cache "$1" --private 1 --top 100 |
    awk -v lo="$LO" -v hi="$HI" "$HEX"'$1 ~ /^[0-9a-f]+$/ && NF >= 6 {
      i = hex($1); if (i >= lo && i < hi) print $3, $4 }'
}
got=$(site L1=32K:8:64) || bad "memreplay --cache L1=32K:8:64 failed"
[[ $got == "$((2 * T * M)) $((T * M))" ]] && ok "32 KiB L1: sweep refs and misses $got" \
  || bad "32 KiB L1: sweep refs and misses '$got', want $((2 * T * M)) $((T * M))"
got=$(site L1=8K:8:64) || bad "memreplay --cache L1=8K:8:64 failed"
[[ $got == "$((2 * T * M)) $((2 * T * M))" ]] && ok "8 KiB L1: sweep refs and misses $got" \
  || bad "8 KiB L1: sweep refs and misses '$got', want $((2 * T * M)) $((2 * T * M))"

# Main's stack accesses (its join loop reads pthread_t ids from its frame)
# normalise to the same offsets when the environment, and with it the
# stack's raw addresses, moves by 3,000 bytes.
stack_refs() {
  rm -rf "$1" && mkdir "$1"
  env PAD="$(printf "%${2}s")" TRACEFOLD_MEM_QUIET=1 TRACEFOLD_MEM_RECORD_AT_START=no \
    TRACEFOLD_MEM_DIR="$1" timeout 60 "$BIN" $T 4 >/dev/null || bad "run with PAD $2 failed"
  "$TF" memreplay "$1" --raw --interleave 0 | awk '$1 == 0 && $8 == "stack"' >"$1.txt"
}
stack_refs pad1 1
stack_refs pad3000 3000
if [[ -s pad1.txt ]] && cmp -s <(cut -d' ' -f1-5,7- pad1.txt) <(cut -d' ' -f1-5,7- pad3000.txt) &&
  ! cmp -s pad1.txt pad3000.txt; then
  ok "main's stack: $(wc -l <pad1.txt) accesses, same normalised offsets, raw addresses moved"
else
  bad "main's stack across environments: $(diff pad1.txt pad3000.txt | head -3 | tr '\n' ' ')"
fi

# %q{VAR} names a directory per rank under mpirun; a missing VAR is refused.
mkdir -p q/7
RC=0
RANKVAR=7 TRACEFOLD_MEM_QUIET=1 TRACEFOLD_MEM_DIR='q/%q{RANKVAR}' timeout 60 "$BIN" 1 1 \
  >/dev/null 2>q7.err || RC=$?
[[ $RC == 0 && -f q/7/thread-1.bin ]] && ok "%q{RANKVAR} -> q/7" \
  || bad "%q{RANKVAR}: exit $RC, $(cat q7.err), $(ls -R q | tr '\n' ' ')"
RC=0
TRACEFOLD_MEM_DIR='q/%q{TFM_NO_SUCH_VAR}' timeout 60 "$BIN" 1 1 >/dev/null 2>q.err || RC=$?
[[ $RC == 2 ]] && grep -q "the environment has no TFM_NO_SUCH_VAR" q.err && ok "missing %q variable" \
  || bad "missing %q variable: $RC $(cat q.err)"

RC=0
TRACEFOLD_MEM_DIR=no/such/dir timeout 60 "$BIN" 1 1 >/dev/null 2>bad.err || RC=$?
[[ $RC == 2 ]] && grep -q "cannot create no/such/dir/thread-0.bin" bad.err \
  && ok "unwritable directory: $(cat bad.err)" || bad "unwritable directory: $RC $(cat bad.err)"
finish
