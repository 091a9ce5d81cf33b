#!/usr/bin/env bash
# The design card's command as a user types it, at the top of this checkout, and the proof that it
# tested something:
#
#   .ci/literal-command.sh PRESET
#       runs `cmake --preset PRESET && ctest`, and fails unless ctest ran tests, as many as
#       `ctest --preset PRESET` lists, and every one passed.
#   .ci/literal-command.sh PRESET [--allow-skip SKIPREGEX] --subset REGEX TARGET...
#       runs `cmake --preset PRESET && cmake --build --preset PRESET --target TARGET... &&
#       KVBENCH_CTEST_NO_BUILD=1 ctest -R REGEX` (a part of the suite, when the whole does not fit
#       the time CI has: the arm64 root), and fails unless the tests REGEX selects ran, as many as
#       `ctest --preset PRESET -R REGEX` lists, every one passed and none was skipped but those
#       SKIPREGEX names (a kernel the emulated core lacks by design, e.g. fold_eor3 without SHA3).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "literal-command: usage: literal-command.sh PRESET [--subset REGEX TARGET...]" >&2; exit 2; }
preset=$1
shift
regex=
allow_skip=
targets=()
if [ "${1:-}" = --allow-skip ]; then
  [ $# -ge 2 ] || { echo "literal-command: --allow-skip needs a REGEX" >&2; exit 2; }
  allow_skip=$2
  shift 2
fi
if [ "${1:-}" = --subset ]; then
  [ $# -ge 3 ] || { echo "literal-command: --subset needs a REGEX and at least one TARGET" >&2; exit 2; }
  regex=$2
  shift 2
  targets=("$@")
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

set +e
if [ -z "$regex" ]; then
  echo "literal-command: cmake --preset $preset && ctest"
  cmake --preset "$preset" && ctest 2>&1 | tee "$log"
else
  echo "literal-command: cmake --preset $preset && cmake --build --preset $preset" \
       "--target ${targets[*]} && KVBENCH_CTEST_NO_BUILD=1 ctest -R '$regex'"
  cmake --preset "$preset" && cmake --build --preset "$preset" --target "${targets[@]}" &&
    KVBENCH_CTEST_NO_BUILD=1 ctest -R "$regex" 2>&1 | tee "$log"
fi
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "literal-command: FAILED: exit status $rc" >&2; exit 1; }

ran=$(sed -n 's/.*tests passed, [0-9]* tests\{0,1\} failed out of \([0-9]*\)$/\1/p' "$log" | tail -1)
listed=$(KVBENCH_CTEST_NO_BUILD=1 ctest --preset "$preset" -N ${regex:+-R "$regex"} |
         sed -n 's/^Total Tests: \([0-9]*\)$/\1/p')
skipped=$(grep -c '(Skipped)$' "$log" || true)
echo "literal-command: ctest ran ${ran:-no} tests; ctest --preset $preset lists ${listed:-none};" \
     "$skipped skipped"
[ -n "$ran" ] && [ "$ran" -gt 0 ] || { echo "literal-command: FAILED: no test ran" >&2; exit 1; }
[ "$ran" = "$listed" ] ||
  { echo "literal-command: FAILED: bare ctest ran $ran tests, the preset has $listed" >&2; exit 1; }
if [ -n "$regex" ] && [ "$skipped" -gt 0 ]; then
  # The summary's lines: "<tab> 13 - AllImplementations/Crc32cTest.Rfc3720Vectors/fold_eor3 (Skipped)"
  unexpected=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$log" |
               { if [ -n "$allow_skip" ]; then grep -E -v -- "$allow_skip" || true; else cat; fi; })
  if [ -n "$unexpected" ]; then
    echo "literal-command: FAILED: tests skipped (a feature of the emulated CPU missing?):" >&2
    printf '  %s\n' $unexpected >&2
    exit 1
  fi
  echo "literal-command: the $skipped skipped match --allow-skip '$allow_skip'"
fi
