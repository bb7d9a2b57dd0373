#!/usr/bin/env bash
# Every C/C++ source of the project is formatted as .clang-format pins it.
# usage: clang_format.sh SOURCE_DIR [CLANG_FORMAT]
set -uo pipefail
SRC=$1
CF=${2:-clang-format}
if ! command -v "$CF" >/dev/null 2>&1; then
  echo "FAIL: $CF not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
cd "$SRC" || exit 1
if [[ -d .git ]] || git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find bench examples include src tests -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp')
fi
((${#files[@]} > 20)) || { echo "FAIL: found only ${#files[@]} sources under $SRC" >&2; exit 1; }
bad=()
# One clang-format for all files (starting one per file was most of the
# time); when it fails, the files it names, and each file alone if it names
# none (an error that is not a formatting one).
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! "$CF" --dry-run -Werror "${files[@]}" >/dev/null 2>"$report"; then
  mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' "$report" |
    awk '!seen[$0]++')
  if ((${#bad[@]} == 0)); then
    for f in "${files[@]}"; do
      "$CF" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
    done
    ((${#bad[@]})) || bad=("(clang-format failed: $(head -c 300 "$report"))")
  fi
fi
echo "$("$CF" --version | head -n 1): ${#files[@]} files checked"
if ((${#bad[@]})); then
  echo "FAIL: not formatted (run: clang-format -i FILE): ${bad[*]}" >&2
  exit 1
fi
echo "all formatted"
