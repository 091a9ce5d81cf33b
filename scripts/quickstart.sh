#!/usr/bin/env bash
# Installs what is missing, builds the host's native gcc preset, runs the standard suite
# (fillseq, readrandom, overwrite, fwdrangewhilewriting) on every storage engine the build has
# (RocksDB, WiredTiger, LMDB), and prints a summary table. Results (JSON and console text, and
# the build's output) go to results/<UTC time>/.
#
#   scripts/quickstart.sh [--num N] [--engines rocksdb,lmdb] [--write-rate BYTES_PER_SEC]
#                         [--no-micro]
#
# --num defaults to 1,000,000 keys (16-byte keys, 100-byte values): a few minutes in all.
# --write-rate paces fwdrangewhilewriting's writer (default 524288, below). A writer that misses
# its target is explained after the summary: what it needed, what it got, and what to change.
set -euo pipefail
cd "$(dirname "$0")/.."

num=1000000
engines=
write_rate=524288
micro=1
. scripts/option-value.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --num|--num=*) option_value num "$@"; shift "$OPTION_WORDS" ;;
    --engines|--engines=*) option_value engines "$@"; shift "$OPTION_WORDS" ;;
    --write-rate|--write-rate=*) option_value write_rate "$@"; shift "$OPTION_WORDS" ;;
    --no-micro) micro=0; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "quickstart.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

[[ $write_rate =~ ^[1-9][0-9]*$ ]] ||
  { echo "quickstart.sh: --write-rate wants bytes per second, got '$write_rate'" >&2; exit 2; }
[ "${KVBENCH_SKIP_DEPS:-0}" = 1 ] || scripts/install-deps.sh
preset=$(scripts/host-preset.sh gcc)
out=results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
# The build's output goes to a file; its warnings, if it has any, are shown here all the same.
echo "quickstart: building $preset (output in $out/build.log)"
if ! { cmake --preset "$preset" && cmake --build --preset "$preset"; } > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  echo "quickstart: the build failed (above; all of it in $out/build.log)" >&2
  exit 1
fi
warnings=$(grep -E '(warning|Warning):' "$out/build.log" | sort -u || true)
if [ -n "$warnings" ]; then
  echo "$warnings"
  echo "quickstart: the build printed $(grep -cE '(warning|Warning):' "$out/build.log") warnings" \
       "($(echo "$warnings" | wc -l) distinct, above; context in $out/build.log)"
fi
bin=build/$preset/src/kvbench
echo "quickstart: preset $preset, --num=$num, results in $out/"

# The storage engines this build has: `kvbench --list-engines` (name<TAB>storage|reference);
# a kvbench without it: --version's engines line less those --help calls REFERENCE engines.
compiled_storage_engines() {
  local list
  if list=$("$bin" --list-engines 2>/dev/null); then
    awk -F'\t' '$2 == "storage" {print $1}' <<<"$list"
    return
  fi
  "$bin" --version | sed -n 's/^engines: //p' | tr ' ' '\n' | grep -v '(not compiled in)' |
    grep -vxF -f <("$bin" --help | awk '/^Engines:/ {e = 1; next} e && /^$/ {exit}
                                         e && /REFERENCE/ {print $1}') || true
}
have=$(compiled_storage_engines)
if [ -z "$engines" ]; then
  engines=$(echo $have | tr ' ' ',')
  # Every engine cmake/deps.json names: those the build lacks are said, not silently dropped.
  missing=$(python3 -c 'import json, sys
print(" ".join(d["name"] for d in json.load(open(sys.argv[1]))["deps"] if d.get("engine")))' \
              cmake/deps.json | tr ' ' '\n' | grep -vxF -f <(echo "$have") || true)
  [ -z "$missing" ] || echo "quickstart: not in this build: $(echo $missing) (kvbench --help says why)"
fi
[ -n "$engines" ] || { echo "quickstart: this kvbench has no storage engine" >&2; exit 1; }

# A paced writer that missed its target, said with the reason kvbench found in the run's own
# evidence (docs/workloads.md): the share of its bytes it delivered from its first write, the
# time it lost, its thread's wait for a CPU or the engine's slow writes and stalls; the CPU its own
# thread needs at the target; and what to change.
explain_pacing() {
  python3 - "$(nproc)" "$@" <<'PY'
import json, os, sys
cores = int(sys.argv[1])
for path in sys.argv[2:]:
    doc = json.load(open(path))
    engine = os.path.basename(path)[:-len(".json")]
    try:
        load = float(open(path[:-len(".json")] + ".loadavg").read())
    except (OSError, ValueError):
        load = float("nan")
    for result in doc["results"]:
        for role in result["roles"]:
            pacing = role.get("pacing")
            if not pacing or pacing["sustained"] or not role["ops"]:
                continue
            own = role["cost"]["thread_cpu_us_per_op"]
            writes = pacing["target_bytes_per_sec"] * role["ops"] / role["bytes"]
            readers = sum(r["threads"] for r in result["roles"] if not r["background"])
            print(f"quickstart: {engine} {result['benchmark']}: the writer did NOT sustain "
                  f"{pacing['target_bytes_per_sec'] / 1048576:.2f} MiB/s: it delivered "
                  f"{100 * pacing.get('delivered_share', 0):.1f}% of the bytes due from its first "
                  f"write (the slowest 1 s window {100 * pacing.get('slowest_window_share', 0):.1f}%).")
            print(f"  kvbench's evidence: {pacing.get('note', '')}.")
            print(f"  At the target its own thread needs {writes * own / 1e6:.2f} of a core "
                  f"({own:.1f} us of CPU per write x {writes:.0f} writes/s), beside {readers} "
                  f"reader thread(s) on {cores} cores (load average {load:.1f}).")
            held = pacing.get("held_back_by", "")
            slower = int(pacing["achieved_bytes_per_sec"] * 0.8)
            advice = {"cpu": f"run on a quiet machine (load below {cores}) or one with more cores",
                      "engine": f"give {engine} more memory (--memory_budget) or a lighter write "
                                f"load (--write-rate {slower})"}.get(
                held, f"pace below what it delivered: --write-rate {slower}")
            print(f"  To change: {advice}.")
PY
}

# The standard suite: load in key order, let background work finish, then point reads,
# random overwrites, and range scans against a paced writer, as RocksDB's benchmark.sh runs
# seekrandomwhilewriting. Its 2 MB/s are of 400-byte values (+ 20-byte keys): about 5,000 writes
# a second. The writer's cost is per write, not per byte, so at our 116-byte entries the same load
# is 512 KiB/s (4,520 writes/s); 2 MiB/s would be 18,000 writes/s, which two cores shared with the
# reader and the engine's threads do not keep up (RocksDB and WiredTiger reach 1.5-1.9 MiB/s
# here). --write-rate sets another.
suite=fillseq,settle,readrandom,overwrite,settle,fwdrangewhilewriting
# The interval of the throughput-over-time figures (docs/report.md): at least 20 intervals in the
# suite's shortest benchmark. That is lmdb's readrandom, --num reads at 1.2 to 3.3 million a
# second on a 2-core VM (0.83 s for 1,000,000, 0.03 s for 100,000): 20 intervals of it at 3
# million a second are num / 6e7 seconds each (0.0167 s at the default --num; the others last
# longer and get more). kvbench takes no interval below 0.01 s: at a small --num the figures
# then have fewer points and say why.
interval=$(awk -v n="$num" 'BEGIN { i = n / 6e7; if (i < 0.01) i = 0.01; printf "%.3g", i }')
# kvbench prints a progress line on stderr every interval; on the terminal one every 5 seconds of
# each benchmark is enough (every other line of stderr, errors included, passes).
every_5s() {
  awk '/^\.\.\. / { t = int(($3 + 0) / 5); if ($2 != b || t != last) { print; fflush() }
                     b = $2; last = t; next }
       { print; fflush() }' >&2
}
failed=()
for engine in ${engines//,/ }; do
  echo
  echo "=== $engine ==="
  if ! grep -qxF "$engine" <<<"$have"; then
    echo "quickstart: SKIPPED $engine: not compiled into this build ($("$bin" --help | grep -E "^  $engine " | sed 's/  */ /g'))" | tee "$out/$engine.skipped"
    failed+=("$engine (not compiled in)")
    continue
  fi
  # One --memory_budget for every engine, split the way each engine wants it (docs/engines.md,
  # "Comparing engines fairly"): with --cache_size alone WiredTiger's default eviction targets
  # thrash at this size and the table would compare a setting.
  if ! "$bin" --engine="$engine" --db="$out/db-$engine" --num="$num" --benchmarks="$suite" \
      --memory_budget=256MB --benchmark_write_rate_limit="$write_rate" \
      --report_interval_seconds="$interval" --json="$out/$engine.json" \
      2> >(every_5s) | tee "$out/$engine.txt"; then
    failed+=("$engine (kvbench failed: see above)")
  fi
  # The 1-minute load average as the suite ends (it covers fwdrangewhilewriting), for the pacing
  # note below.
  cut -d' ' -f1 /proc/loadavg > "$out/$engine.loadavg"
  rm -rf "$out/db-$engine"
done

echo
echo "=== summary: $num keys, $(nproc) CPUs, preset $preset ==="
shopt -s nullglob
jsons=("$out"/*.json)
if [ ${#jsons[@]} -gt 0 ]; then
  python3 scripts/kvb report "${jsons[@]}" | tee "$out/summary.txt"
  explain_pacing "${jsons[@]}" | tee -a "$out/summary.txt"
  # Figures (docs/report.md): one self-contained page beside the JSON.
  if scripts/kvb report --html "$out/report.html" "${jsons[@]}" >/dev/null; then
    echo "quickstart: figures in $out/report.html"
  else
    echo "quickstart: no report.html (kvb report --html failed above)" >&2
  fi
  # History (docs/history.md): every run kept, so `kvb history` and `kvb trend` see it later.
  if [ -z "${KVBENCH_NO_STORE:-}" ]; then
    scripts/kvb store add "${jsons[@]}" >/dev/null ||
      echo "quickstart: the runs were not stored (kvb store add failed above)" >&2
  fi
fi

micro_bin=build/$preset/bench/kvbench_micro
if [ "$micro" = 1 ] && [ -x "$micro_bin" ]; then
  echo
  echo "=== microbenchmarks, 4 KiB blocks ($preset) ==="
  scripts/kvb micro --binary "$micro_bin" | tee "$out/micro.txt"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "quickstart: NOT every engine ran: ${failed[*]}" >&2
  exit 1
fi
echo
echo "quickstart: results in $out/"
