#!/usr/bin/env bash
# Makes the VALGRIND_LIB directory for tracefold-mem and its wrapper.
# usage: make_vglib.sh VALGRIND_LIBEXEC VGLIB_DIR VALGRIND_BINARY WRAPPER
# VGLIB_DIR already holds the freshly linked tool; every file of the
# installed Valgrind is linked next to it, because the core loads its
# preload libraries and suppressions from the same directory as the tool.
set -euo pipefail
libexec=$1 vglib=$2 valgrind=$3 wrapper=$4
[[ -f $vglib/tracefold-mem-amd64-linux ]] || { echo "make_vglib: no tool in $vglib" >&2; exit 1; }
for f in "$libexec"/*; do
  name=${f##*/}
  [[ $name == tracefold-mem-* || $name == vgpreload_tracefold-mem-* ]] && continue
  ln -sfn "$f" "$vglib/$name"
done
cat >"$wrapper.tmp" <<EOS
#!/bin/sh
# Runs valgrind with the tracefold-mem tool of this build.
VALGRIND_LIB='$vglib'
export VALGRIND_LIB
exec '$valgrind' --tool=tracefold-mem "\$@"
EOS
chmod +x "$wrapper.tmp"
mv "$wrapper.tmp" "$wrapper"
