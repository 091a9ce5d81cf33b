#!/usr/bin/env bash
# Makes the README's picture of `kvb report --html` from a real run: quickstart.sh's suite at a
# small --num on rocksdb, wiredtiger and lmdb (under a minute on 2 cores), the page of those three
# runs, and headless Chromium's rendering of the page's top (1280 px wide), reduced to a palette
# so that the PNG stays small enough to keep in git.
#
#   scripts/screenshot.sh [--kvbench BIN] [--num N] [--out PNG]
#
# --kvbench defaults to build/<native gcc preset>/src/kvbench (build it first), --num to 100000,
# --out to docs/report-screenshot.png. Needs chromium and python3-matplotlib (Pillow comes with
# it); scripts/install-deps.sh installs both. Exit 2: a bad argument or a missing tool or binary,
# nothing run; 1: a run, the page or the rendering failed, --out unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/$(scripts/host-preset.sh gcc)/src/kvbench
num=100000
out=docs/report-screenshot.png
. scripts/option-value.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --kvbench|--kvbench=*) option_value bin "$@"; shift "$OPTION_WORDS" ;;
    --num|--num=*) option_value num "$@"; shift "$OPTION_WORDS" ;;
    --out|--out=*) option_value out "$@"; shift "$OPTION_WORDS" ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "screenshot.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

usage_error() { echo "screenshot.sh: $*" >&2; exit 2; }
[[ $num =~ ^[1-9][0-9]*$ ]] || usage_error "--num wants a positive count of keys, got '$num'"
[[ $out == *.png ]] || usage_error "--out wants a .png file, got '$out'"
[ -d "$(dirname "$out")" ] || usage_error "--out: no directory $(dirname "$out")"
[ -x "$bin" ] || usage_error "no kvbench at $bin: build it first (cmake --preset $(scripts/host-preset.sh gcc) && cmake --build --preset $(scripts/host-preset.sh gcc)) or give --kvbench BIN"
chromium=$(command -v chromium || command -v chromium-browser) ||
  usage_error "chromium is not installed (scripts/install-deps.sh installs it)"
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
"$python" -c 'import PIL, matplotlib' 2>/dev/null ||
  usage_error "python3-matplotlib (and the Pillow it brings) is not installed (scripts/install-deps.sh installs it)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvb-screenshot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The suite and the interval of scripts/quickstart.sh (its comments say why), at a smaller --num.
suite=fillseq,settle,readrandom,overwrite,settle,fwdrangewhilewriting
interval=$(awk -v n="$num" 'BEGIN { i = n / 6e7; if (i < 0.01) i = 0.01; printf "%.3g", i }')
for engine in rocksdb wiredtiger lmdb; do
  echo "screenshot.sh: $engine, --num=$num"
  "$bin" --engine="$engine" --db="$tmp/db-$engine" --num="$num" --benchmarks="$suite" \
      --memory_budget=256MB --benchmark_write_rate_limit=524288 \
      --report_interval_seconds="$interval" --json="$tmp/$engine.json" >/dev/null 2>"$tmp/$engine.err" ||
    { tail -5 "$tmp/$engine.err" >&2; echo "screenshot.sh: kvbench failed on $engine (above)" >&2; exit 1; }
  rm -rf "$tmp/db-$engine"
done

# From inside the directory, so that the page names the runs by their file names alone.
(cd "$tmp" && "$OLDPWD/scripts/kvb" report --html report.html rocksdb.json wiredtiger.json lmdb.json >/dev/null)
"$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
    --hide-scrollbars --user-data-dir="$tmp/chromium" --window-size=1280,1800 \
    --screenshot="$tmp/page.png" "file://$tmp/report.html" >"$tmp/chromium.log" 2>&1 ||
  { tail -5 "$tmp/chromium.log" >&2; echo "screenshot.sh: chromium could not render the page (above)" >&2; exit 1; }

# 128 colours without dithering keep text and figures sharp at about a third of the bytes.
"$python" - "$tmp/page.png" "$tmp/small.png" <<'PY'
import sys
from PIL import Image
page = Image.open(sys.argv[1]).convert("RGB")
page.quantize(colors=128, method=Image.Quantize.MEDIANCUT,
              dither=Image.Dither.NONE).save(sys.argv[2], optimize=True)
PY
mv "$tmp/small.png" "$out"
echo "screenshot.sh: $out ($(($(stat -c %s "$out") / 1024)) KiB) from $bin"
