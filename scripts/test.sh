#!/usr/bin/env bash
# Installs what is missing, then runs the design card's command as typed, `cmake --preset NAME &&
# ctest` at the top of the checkout (ctest builds first), and fails unless every test of the
# preset ran and passed (.ci/literal-command.sh). CI runs exactly this.
#   scripts/test.sh                      # the host's native gcc preset
#   scripts/test.sh --preset NAME        # any preset from CMakePresets.json
#   scripts/test.sh --under-load [N]     # the same beside N busy loops (default: twice the
#                                        # cores, so that with ctest's own jobs the load is about
#                                        # 3x the cores): what CI and shared machines see
# Set KVBENCH_SKIP_DEPS=1 to skip the package check.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(scripts/host-preset.sh gcc)
hogs=0
. scripts/option-value.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --preset|--preset=*) option_value preset "$@"; shift "$OPTION_WORDS" ;;
    --under-load=*) option_value hogs "$@"; shift "$OPTION_WORDS" ;;
    --under-load)
      hogs=$(( 2 * $(nproc) ))
      if [[ ${2:-} =~ ^[0-9]+$ ]]; then hogs=$2; shift; fi
      shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $hogs =~ ^[0-9]+$ ]] || { echo "test.sh: --under-load takes a number of busy loops, not '$hogs'" >&2; exit 2; }
[ "${KVBENCH_SKIP_DEPS:-0}" = 1 ] || scripts/install-deps.sh
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$(nproc)}
if [ "$hogs" -gt 0 ]; then
  # Busy loops at normal priority, in a process group of their own that ends with this script.
  setsid bash -c 'for _ in $(seq "$1"); do (while :; do :; done) & done; wait' _ "$hogs" &
  hog_group=$!
  trap 'kill -- -"$hog_group" 2>/dev/null || true' EXIT
  echo "test.sh: under load: $hogs busy loops beside ctest -j$CTEST_PARALLEL_LEVEL on $(nproc) cores"
  t0=$(date +%s)
  rc=0
  .ci/literal-command.sh "$preset" || rc=$?
  echo "test.sh: exit $rc after $(( $(date +%s) - t0 )) s under load (load average now:" \
       "$(cut -d' ' -f1-3 /proc/loadavg))"
  exit "$rc"
fi
exec .ci/literal-command.sh "$preset"
