#!/usr/bin/env bash
# tracefold-mem runs a program with unchanged output and exit status, writes
# one well-formed raw stream, and rejects a --raw-log that is not a directory.
TFM=$1 SRC=$2 K=$3
source "$SRC/tests/memtrace/memtrace_lib.bash"

timeout 60 "$K/vadd" 5000 7 >native.txt 2>&1 && NRC=0 || NRC=$?
[[ $NRC == 7 ]] || bad "the kernel itself exited $NRC, not 7"

mkdir raw
tfm out.txt err.txt --raw-log=raw "$K/vadd" 5000 7
if [[ $RC == 7 ]]; then ok "exit status 7 kept"; else bad "exit status $RC under the tool, not 7"; fi
if cmp -s native.txt out.txt; then ok "stdout unchanged"; else bad "stdout differs: $(cat out.txt)"; fi
grep -q 'tracefold-mem: 1 thread, [0-9]* loads, [0-9]* stores recorded; raw streams in /.*/raw$' err.txt \
  && ok "summary printed" || bad "no summary line in: $(tail -3 err.txt)"
ls raw >files.txt
if [[ $(tr "\n" " " <files.txt) == "contexts.bin modules.bin thread-0.bin " ]]; then ok "one stream, its contexts and modules"; else bad "files: $(cat files.txt)"; fi
if c=$(rawcount raw/thread-0.bin); then
  ok "stream well formed: $c"
  records=$(sed 's/.*records=\([0-9]*\).*/\1/' <<<"$c")
  ((records > 15000)) || bad "only $records records for 10000 loads and 5000 stores"
else
  bad "raw stream unreadable"
fi

tfm out2.txt err2.txt --raw-log=/nonexistent/dir "$K/vadd" 10
[[ $RC != 0 ]] && grep -q 'not an existing directory' err2.txt \
  && ok "missing --raw-log directory refused ($RC)" || bad "missing directory: rc $RC, $(tail -2 err2.txt)"
finish
