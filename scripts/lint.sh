#!/usr/bin/env bash
# Lints kvbench's own code and exits 1 on any finding:
#  - Python: pyflakes (Debian's python3-pyflakes) over scripts/kvb, scripts/kvbtools and
#    tests/*.py: no unused import or name, no undefined name. (The import layers and the length
#    of functions of scripts/kvbtools are tests/kvbtools_layers_test.py's, run by ctest.)
#  - C++: clang-tidy (Debian's clang-tidy 14, the checks in .clang-tidy) over every C++ source
#    file of src/ and bench/, with the compile commands of a configured preset.
#
#   scripts/lint.sh [--preset PRESET] [--jobs N] [--python-only] [FILE...]
#
# PRESET defaults to the host's clang preset (scripts/host-preset.sh clang); it is configured if
# build/PRESET/compile_commands.json is missing. FILEs (C++) default to every *.cc of src/ and
# bench/ that the preset compiles (headers are checked through them: .clang-tidy's
# HeaderFilterRegex). --python-only: only pyflakes.
set -euo pipefail
cd "$(dirname "$0")/.."

preset=""
jobs=2
python_only=0
files=()
. scripts/option-value.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --preset|--preset=*) option_value preset "$@"; shift "$OPTION_WORDS" ;;
    --jobs|--jobs=*) option_value jobs "$@"; shift "$OPTION_WORDS" ;;
    --python-only) python_only=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "lint.sh: unknown argument $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
# Debian's interpreter has Debian's pyflakes (a python3 first on PATH may be another build).
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -m pyflakes --version >/dev/null 2>&1; then
  echo "lint.sh: pyflakes not found for $python: apt-get install python3-pyflakes" >&2
  exit 2
fi
mapfile -t py < <(git ls-files 'scripts/kvb' 'scripts/kvbtools/*.py' 'tests/*.py')
echo "lint.sh: pyflakes ($("$python" -m pyflakes --version | cut -d' ' -f1)) on ${#py[@]} Python files"
if ! "$python" -m pyflakes "${py[@]}"; then
  echo "lint.sh: pyflakes findings above" >&2
  exit 1
fi
[ "$python_only" = 0 ] || { echo "lint.sh: no findings"; exit 0; }

[ -n "$preset" ] || preset=$(scripts/host-preset.sh clang)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$tidy" ]; then
  echo "lint.sh: clang-tidy not found: apt-get install clang-tidy" >&2
  exit 2
fi
db=build/$preset/compile_commands.json
if [ ! -f "$db" ]; then
  cmake --preset "$preset" >/dev/null
fi
if [ ${#files[@]} -eq 0 ]; then
  # The files the preset compiles: an engine that was not found has no compile command.
  mapfile -t files < <(git ls-files 'src/*.cc' 'bench/*.cc' |
                       while read -r f; do grep -q "\"file\": \"$PWD/$f\"" "$db" && echo "$f"; done)
fi

log=$(mktemp)
trap 'rm -f "$log" "$log.err"' EXIT
echo "lint.sh: clang-tidy ($("$tidy" --version | grep -o 'version [0-9.]*')) on ${#files[@]} files," \
     "compile commands of $preset, -j$jobs"
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -I{} "$tidy" -p "build/$preset" --quiet {} >"$log" 2>"$log.err" || status=$?
findings=$(grep -cE '(warning|error): ' "$log" || true)
if [ "$findings" -gt 0 ] || [ "$status" -ne 0 ]; then
  cat "$log"
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated|^Suppressed|^Use -header-filter' \
    "$log.err" >&2 || true
  echo "lint.sh: $findings finding(s); clang-tidy exit status $status" >&2
  exit 1
fi
echo "lint.sh: no findings"
