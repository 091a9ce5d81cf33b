#!/usr/bin/env bash
# Installs what is missing, then runs the design card's command as typed, `cmake --preset NAME &&
# ctest` at the top of the checkout (ctest builds first), and fails unless every test of the
# preset ran and passed (.ci/literal-command.sh). CI runs exactly this.
#   scripts/test.sh                      # the host's native gcc preset
#   scripts/test.sh --preset NAME        # any preset from CMakePresets.json
# Set KVBENCH_SKIP_DEPS=1 to skip the package check.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(scripts/host-preset.sh gcc)
. scripts/option-value.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --preset|--preset=*) option_value preset "$@"; shift "$OPTION_WORDS" ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "${KVBENCH_SKIP_DEPS:-0}" = 1 ] || scripts/install-deps.sh
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$(nproc)}
exec .ci/literal-command.sh "$preset"
