#!/usr/bin/env bash
# ci-source-build.sh [--keep DIR]
#
# Exercises the source-build path end to end, as CI does on every change: fetches lz4 1.9.4 from
# Debian (scripts/get-sources.sh), configures the host's gcc preset with
# -DKVBENCH_LZ4_SOURCE_DIR into a fresh dependency cache (so lz4 is really built, not reused),
# builds kvbench and kvbench_micro, checks that `kvbench --version` and kvbench_micro's context
# say lz4 1.9.4 came from that source with the preset's compiler and flags, and runs the lz4
# round-trip tests and benchmarks against it. Everything goes to a temporary directory (or DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
work=""
if [ "${1:-}" = --keep ]; then work=$2; mkdir -p "$work"; fi
if [ -z "$work" ]; then
  work=$(mktemp -d -t kvbench-ci-src.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
fail() { echo "ci-source-build: FAIL: $*" >&2; exit 1; }

version=1.9.4
preset=$(scripts/host-preset.sh gcc)
src=$(scripts/get-sources.sh lz4 "$version" "$work/lz4-$version" | tail -n1)
t0=$(date +%s)
cmake --preset "$preset" -B "$work/build" -DKVBENCH_LZ4_SOURCE_DIR="$src" \
      -DKVBENCH_DEPS_CACHE="$work/deps" | grep -E 'kvbench: (building|built|lz4)' || true
ls "$work"/deps/lz4-"$version"-*/kvbench-build.stamp >/dev/null 2>&1 \
  || fail "no build stamp under $work/deps"
cmake --build "$work/build" --target kvbench kvbench_micro micro_codec_test
echo "ci-source-build: configured (with lz4) and built in $(( $(date +%s) - t0 )) s"

# The audit: origin, version, tree, compiler and the preset's target flags.
"$work/build/src/kvbench" --version | tee "$work/version.txt"
arch=$(sed -n 's/^flags: .*\(-m\(arch\|cpu\)=[^ ]*\).*/\1/p' "$work/version.txt")
compiler=$(sed -n 's/^compiler: //p' "$work/version.txt")
line=$(grep -E "^  lz4 +$version +source " "$work/version.txt") \
  || fail "kvbench --version does not say lz4 $version comes from source"
for want in "$src" "($compiler:" "$arch" "-O2 -DNDEBUG" "static "; do
  case "$line" in *"$want"*) ;; *) fail "lz4 audit line lacks '$want': $line" ;; esac
done

# The micro's lz4 tests and a short lz4 benchmark, on the source-built library.
ctest --test-dir "$work/build" -R 'Lz4' --output-on-failure
"$work/build/bench/kvbench_micro" --benchmark_filter='^lz4/[a-z0-9_]+/4096$' \
  --benchmark_min_time=0.01 --benchmark_out="$work/micro.json" --benchmark_out_format=json
python3 - "$work/micro.json" "$version" "$src" <<'PY'
import json, sys
ctx = json.load(open(sys.argv[1]))["context"]
origin, want = ctx.get("lz4_origin", ""), f"source {sys.argv[3]} {sys.argv[2]} "
assert origin.startswith(want), f"kvbench_micro lz4_origin is {origin!r}, expected {want!r}..."
assert ctx.get("lz4_library_version") == sys.argv[2], ctx.get("lz4_library_version")
print(f"ci-source-build: kvbench_micro lz4_origin: {origin}")
PY
echo "ci-source-build: ok (lz4 $version from source)"
