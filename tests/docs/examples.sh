#!/usr/bin/env bash
# Runs the examples shown in README.md and docs/*.md so that they cannot rot.
#
#   bash tests/docs/examples.sh TRACEFOLD_BINARY SOURCE_DIR
#
# Every fenced block whose info string is `console` is an example session:
#   - a line starting with "$ " is a command (a trailing backslash continues
#     it on the next line);
#   - the lines after a command, up to the next command or the end of the
#     block, are its expected output (stdout and stderr together, as a
#     terminal shows them);
#   - a line that is exactly "..." matches any number of output lines.
# Other fenced blocks (sh, text, ebnf, ...) are not run.
#
# Each document gets a fresh temporary directory holding a copy of the
# examples as `examples/` (so commands read like they are typed at the top of
# the source tree). Its blocks run in order in that directory, so a later
# block can use files an earlier one wrote; within a block, commands share
# one shell (cd, variables and $? carry over). `tracefold` in a command runs
# TRACEFOLD_BINARY: the binary is put first on PATH under the name
# `tracefold`, so usage lines print "tracefold" and not a build path.
#
# Output must match exactly; each mismatch is reported with the document, the
# line of the command and a unified diff. Exit status: 0 if all examples
# pass, 1 if any fails, 2 on bad usage.
#
# The recording examples (docs/recording.md) compile with `mpicc` and run
# `mpirun` (the build's MPI: see mpi_shim below) through `tracefold record`, which finds libtracefold.so next to
# TRACEFOLD_BINARY's build tree: they need the MPI recorder to be built.
# Open MPI refuses to run as root and to start more ranks than there are
# cores unless told otherwise, so both are allowed here (harmless for other
# users and other MPI implementations).
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

if (($# != 2)); then
  echo "usage: bash $0 TRACEFOLD_BINARY SOURCE_DIR" >&2
  exit 2
fi
if [[ ! -x $1 || -d $1 ]]; then
  echo "examples.sh: $1 is not an executable file" >&2
  exit 2
fi
if [[ ! -d $2/examples ]]; then
  echo "examples.sh: $2 has no examples/ directory" >&2
  exit 2
fi
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
source_dir="$(cd "$2" && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/tracefold-docs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$binary" "$work/bin/tracefold"
# `mpicc`, `mpirun` and `mpiexec` in the examples mean the MPI the build
# uses (TRACEFOLD_MPICC, TRACEFOLD_MPIRUN, set by CTest), not whichever
# the system's defaults point to: an MPICH build must not compile its
# examples with Open MPI. Resolved before bin/ shadows the plain names.
mpi_shim() {
  local name=$1 target=$2 path
  [[ -n $target ]] || return 0
  if ! path=$(command -v "$target"); then
    echo "examples.sh: $target (the build's MPI) not found" >&2
    exit 2
  fi
  [[ $(basename "$path") == "$name" && $(dirname "$path") == "$work/bin" ]] && return 0
  printf '#!/bin/sh\nexec %q "$@"\n' "$path" >"$work/bin/$name"
  chmod +x "$work/bin/$name"
}
mpi_shim mpicc "${TRACEFOLD_MPICC:-}"
mpi_shim mpirun "${TRACEFOLD_MPIRUN:-}"
mpi_shim mpiexec "${TRACEFOLD_MPIRUN:-}"

docs=()
[[ -f $source_dir/README.md ]] && docs+=("$source_dir/README.md")
for f in "$source_dir"/docs/*.md; do
  [[ -f $f ]] && docs+=("$f")
done

total_blocks=0
total_commands=0
failures=0

# match_output: do the expected lines in E (with "..." wildcards) match the
# actual lines in A? Dynamic programming over suffixes, bottom-up.
match_output() {
  local n=${#E[@]} m=${#A[@]} i j
  local -a next=() cur=()
  for ((j = 0; j <= m; j++)); do next[j]=0; done
  next[m]=1
  for ((i = n - 1; i >= 0; i--)); do
    cur=()
    for ((j = m; j >= 0; j--)); do
      cur[j]=0
      if [[ ${E[i]} == "..." ]]; then
        if ((next[j])) || { ((j < m)) && ((cur[j + 1])); }; then cur[j]=1; fi
      elif ((j < m)) && [[ ${E[i]} == "${A[j]}" ]] && ((next[j + 1])); then
        cur[j]=1
      fi
    done
    next=("${cur[@]}")
  done
  ((next[0]))
}

# run_block DOC_REL DIR: runs the commands collected in CMDS (with their doc
# lines in CMD_LINES and expected outputs in EXPECTED) inside DIR.
run_block() {
  local rel=$1 dir=$2 block_dir script k
  block_dir="$(mktemp -d "$work/block.XXXXXX")"
  script="$block_dir/session.sh"
  {
    echo '__tf_status=0'
    for k in "${!CMDS[@]}"; do
      # shellcheck disable=SC2016  # $__tf_status is expanded by the session shell
      printf '(exit $__tf_status); {\n%s\n} >%q 2>&1 </dev/null; __tf_status=$?\n' \
        "${CMDS[k]}" "$block_dir/out.$k"
    done
  } >"$script"
  (cd "$dir" && PATH="$work/bin:$PATH" LC_ALL=C TZ=UTC timeout 300 bash "$script") \
    >"$block_dir/session.log" 2>&1 || true
  for k in "${!CMDS[@]}"; do
    total_commands=$((total_commands + 1))
    E=() A=()
    if [[ -n ${EXPECTED[k]} ]]; then mapfile -t E <<<"${EXPECTED[k]%$'\n'}"; fi
    if [[ -f $block_dir/out.$k ]]; then
      mapfile -t A <"$block_dir/out.$k"
    else
      A=("(command did not run; session log follows)")
      mapfile -t -O 1 A <"$block_dir/session.log"
    fi
    if ! match_output; then
      failures=$((failures + 1))
      echo "FAIL: $rel:${CMD_LINES[k]}: \$ ${CMDS[k]%%$'\n'*}"
      diff -u --label "$rel:${CMD_LINES[k]} (expected)" --label "actual output" \
        <(((${#E[@]})) && printf '%s\n' "${E[@]}") \
        <(((${#A[@]})) && printf '%s\n' "${A[@]}") || true
      echo
    fi
  done
}

for doc in "${docs[@]}"; do
  rel="${doc#"$source_dir"/}"
  dir="$work/$(echo "$rel" | tr '/.' '__')"
  mkdir -p "$dir"
  cp -R "$source_dir/examples" "$dir/examples"
  in_fence=0 fence="" is_console=0 line_no=0 continued=0
  CMDS=() CMD_LINES=() EXPECTED=()
  while IFS= read -r line || [[ -n $line ]]; do
    line_no=$((line_no + 1))
    if ((!in_fence)); then
      if [[ $line =~ ^(\`\`\`+)[[:space:]]*([^[:space:]\`]*) ]]; then
        in_fence=1 fence=${BASH_REMATCH[1]} is_console=0
        [[ ${BASH_REMATCH[2]} == console ]] && is_console=1
        CMDS=() CMD_LINES=() EXPECTED=() continued=0
      fi
      continue
    fi
    if [[ $line =~ ^(\`+)[[:space:]]*$ ]] && ((${#BASH_REMATCH[1]} >= ${#fence})); then
      in_fence=0
      if ((is_console)); then
        total_blocks=$((total_blocks + 1))
        if ((${#CMDS[@]} == 0)); then
          echo "FAIL: $rel:$line_no: console block without any '\$ ' command"
          failures=$((failures + 1))
        else
          run_block "$rel" "$dir"
        fi
      fi
      continue
    fi
    ((is_console)) || continue
    k=$((${#CMDS[@]} - 1))
    if ((continued)); then
      CMDS[k]+=$'\n'"$line"
      [[ $line == *\\ ]] || continued=0
    elif [[ $line == '$ '* ]]; then
      CMDS+=("${line#'$ '}") CMD_LINES+=("$line_no") EXPECTED+=("")
      [[ $line == *\\ ]] && continued=1
    elif ((k < 0)); then
      echo "FAIL: $rel:$line_no: output before the first '\$ ' command in a console block"
      failures=$((failures + 1))
    else
      EXPECTED[k]+="$line"$'\n'
    fi
  done <"$doc"
  if ((in_fence)); then
    echo "FAIL: $rel: a fenced block is never closed"
    failures=$((failures + 1))
  fi
done

if ((total_blocks == 0)); then
  echo "FAIL: no console examples found in README.md or docs/*.md"
  exit 1
fi
echo "docs examples: $total_commands commands in $total_blocks console blocks of ${#docs[@]} files, $failures failed"
((failures == 0)) || exit 1
