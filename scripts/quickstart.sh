#!/usr/bin/env bash
# Installs what is missing, builds the host's native gcc preset, runs the standard suite
# (fillseq, readrandom, overwrite, fwdrangewhilewriting) on RocksDB, WiredTiger and LMDB, and
# prints a summary table. Results (JSON and console text) go to results/<UTC time>/.
#
#   scripts/quickstart.sh [--num N] [--engines rocksdb,wiredtiger,lmdb] [--no-micro]
#
# --num defaults to 1,000,000 keys (16-byte keys, 100-byte values): a few minutes in all.
set -euo pipefail
cd "$(dirname "$0")/.."

num=1000000
engines=rocksdb,wiredtiger,lmdb
micro=1
while [ $# -gt 0 ]; do
  case "$1" in
    --num) num=$2; shift 2 ;;
    --num=*) num=${1#--num=}; shift ;;
    --engines) engines=$2; shift 2 ;;
    --engines=*) engines=${1#--engines=}; shift ;;
    --no-micro) micro=0; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "quickstart.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

[ "${KVBENCH_SKIP_DEPS:-0}" = 1 ] || scripts/install-deps.sh
preset=$(scripts/host-preset.sh gcc)
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
bin=build/$preset/src/kvbench
out=results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "quickstart: preset $preset, --num=$num, results in $out/"

# The standard suite: load in key order, let background work finish, then point reads,
# random overwrites, and range scans against a writer paced at 2 MB/s (as RocksDB's
# benchmark.sh runs seekrandomwhilewriting).
suite=fillseq,settle,readrandom,overwrite,settle,fwdrangewhilewriting
failed=()
for engine in ${engines//,/ }; do
  echo
  echo "=== $engine ==="
  if ! "$bin" --version | grep -qE "engines:.* $engine( |$)"; then
    echo "quickstart: SKIPPED $engine: not compiled into this build ($("$bin" --help | grep -E "^  $engine " | sed 's/  */ /g'))" | tee "$out/$engine.skipped"
    failed+=("$engine (not compiled in)")
    continue
  fi
  if ! "$bin" --engine="$engine" --db="$out/db-$engine" --num="$num" --benchmarks="$suite" \
      --benchmark_write_rate_limit=2097152 --report_interval_seconds=5 \
      --json="$out/$engine.json" | tee "$out/$engine.txt"; then
    failed+=("$engine (kvbench failed: see above)")
  fi
  rm -rf "$out/db-$engine"
done

echo
echo "=== summary: $num keys, $(nproc) CPUs, preset $preset ==="
shopt -s nullglob
jsons=("$out"/*.json)
if [ ${#jsons[@]} -gt 0 ]; then
  python3 scripts/kvb report "${jsons[@]}" | tee "$out/summary.txt"
fi

micro_bin=build/$preset/bench/kvbench_micro
if [ "$micro" = 1 ] && [ -x "$micro_bin" ] && [ -f scripts/micro_summary.py ]; then
  echo
  echo "=== microbenchmarks, 4 KiB blocks ($preset) ==="
  python3 scripts/micro_summary.py --binary "$micro_bin" | tee "$out/micro.txt"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "quickstart: NOT every engine ran: ${failed[*]}" >&2
  exit 1
fi
echo
echo "quickstart: results in $out/"
