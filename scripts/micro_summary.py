#!/usr/bin/env python3
"""Run kvbench_micro on 4 KiB blocks with a short minimum time and print GB/s per function.

Used by scripts/quickstart.sh:
    python3 scripts/micro_summary.py --binary build/<preset>/bench/kvbench_micro

Also compares JSON files that kvbench_micro wrote (--benchmark_out=FILE), e.g. two presets:
    python3 scripts/micro_summary.py --compare gcc.json clang.json
prints the context entries that differ, then GB/s per benchmark side by side with the ratio to
the first file (the median of the repetitions when the run had --benchmark_repetitions).

GB/s here is 10^9 bytes per second of uncompressed input (Google Benchmark's console prints
GiB/s). For careful numbers run kvbench_micro itself with --benchmark_repetitions (docs/micro.md).
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any


def run_micro(binary: str, block_size: int, min_time: float, extra: list[str]) -> dict[str, Any]:
    """Runs the binary on one block size and returns its parsed JSON output."""
    with tempfile.TemporaryDirectory(prefix="micro_summary.") as tmp:
        out = os.path.join(tmp, "micro.json")
        cmd = [
            binary,
            f"--benchmark_filter=/{block_size}(/cold)?$",
            f"--benchmark_min_time={min_time}",
            f"--block_sizes={block_size}",
            f"--benchmark_out={out}",
            "--benchmark_out_format=json",
            *extra,
        ]
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def function_name(benchmark_name: str) -> str:
    """'crc32c/hw_3way/4096' -> 'crc32c/hw_3way' (and keeps a /cold marker)."""
    parts = benchmark_name.split("/")
    cold = parts[-1] == "cold"
    if cold:
        parts = parts[:-1]
    return "/".join(parts[:-1]) + (" (cold)" if cold else "")


def format_table(doc: dict[str, Any], block_size: int) -> str:
    ctx = doc.get("context", {})
    lines = [
        "kvbench_micro {preset}: {compiler}, {arch}, {build_type}; {mode}".format(
            preset=ctx.get("kvbench_preset", "?"),
            compiler=ctx.get("kvbench_compiler", "?"),
            arch=ctx.get("kvbench_arch_flags", "?"),
            build_type=ctx.get("kvbench_build_type", "?"),
            mode=ctx.get("cache_mode", "?"),
        ),
        f"{block_size}-byte blocks; GB/s = 10^9 bytes/s of uncompressed input; "
        "ratio = compressed/input",
        "",
    ]
    rows: list[tuple[str, str, str, str]] = [("function", "GB/s", "ratio", "what")]
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = function_name(b["name"])
        if b.get("error_occurred"):
            rows.append((name, "-", "", "skipped: " + b.get("error_message", "")))
            continue
        gbps = b.get("bytes_per_second", 0.0) / 1e9
        ratio = b.get("compression_ratio")
        rows.append((name, f"{gbps:.2f}", "" if ratio is None else f"{ratio:.3f}",
                     b.get("label", "")))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        lines.append(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
                     .rstrip())
    return "\n".join(lines)


# Context entries that describe the input rather than the build: if they differ, the files
# measured different bytes and their numbers are not comparable.
INPUT_KEYS = ("input", "cache_mode")


def load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def gbps_by_name(doc: dict[str, Any]) -> dict[str, float | None]:
    """GB/s per benchmark name: the median aggregate if present, else the mean of the runs;
    None for a benchmark that was skipped with an error."""
    runs: dict[str, list[float]] = {}
    medians: dict[str, float] = {}
    skipped: set[str] = set()
    for b in doc.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            skipped.add(name)
        elif b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median" and "bytes_per_second" in b:
                medians[name] = b["bytes_per_second"] / 1e9
        elif "bytes_per_second" in b:
            runs.setdefault(name, []).append(b["bytes_per_second"] / 1e9)
    out: dict[str, float | None] = {name: None for name in skipped}
    for name, values in runs.items():
        out[name] = medians.get(name, sum(values) / len(values))
    return out


def column_titles(docs: list[dict[str, Any]], paths: list[str]) -> list[str]:
    presets = [d.get("context", {}).get("kvbench_preset", "") for d in docs]
    if all(presets) and len(set(presets)) == len(presets):
        return presets
    return [os.path.basename(p) for p in paths]


def format_compare(paths: list[str]) -> str:
    docs = [load(p) for p in paths]
    titles = column_titles(docs, paths)
    lines: list[str] = []
    contexts = [d.get("context", {}) for d in docs]
    keys = sorted(set().union(*contexts))
    differing = [k for k in keys if len({str(c.get(k)) for c in contexts}) > 1]
    lines.append("context entries that differ:" if differing else "contexts are identical")
    for k in differing:
        lines.append(f"  {k}:")
        for title, c in zip(titles, contexts):
            lines.append(f"    {title}: {c.get(k, '(absent)')}")
    for k in INPUT_KEYS:
        if k in differing:
            lines.append(f"WARNING: '{k}' differs: the files measured different input; "
                         "their numbers are not comparable")
    values = [gbps_by_name(d) for d in docs]
    names: list[str] = []
    for v in values:
        names.extend(n for n in v if n not in names)
    lines.append("")
    lines.append(f"GB/s (10^9 bytes/s); ratio = column / {titles[0]}")
    header = ["benchmark", *titles, *(f"ratio {t}" for t in titles[1:])]
    rows: list[list[str]] = [header]
    for name in names:
        row = [name]
        for v in values:
            g = v.get(name, "absent")
            row.append("absent" if g == "absent" else "skipped" if g is None else f"{g:.2f}")
        base = values[0].get(name)
        for v in values[1:]:
            g = v.get(name)
            ok = isinstance(base, float) and isinstance(g, float) and base > 0
            row.append(f"{g / base:.2f}x" if ok else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="path to kvbench_micro")
    parser.add_argument("--compare", nargs="+", metavar="JSON",
                        help="compare kvbench_micro JSON files instead of running the binary")
    parser.add_argument("--block_size", type=int, default=4096, help="bytes (default 4096)")
    parser.add_argument("--min_time", type=float, default=0.05,
                        help="--benchmark_min_time per benchmark, seconds (default 0.05)")
    parser.add_argument("--json_out", help="also keep kvbench_micro's JSON here")
    parser.add_argument("extra", nargs="*",
                        help="after --: more kvbench_micro flags, e.g. -- --cache_cold")
    args = parser.parse_args(argv)
    if args.compare:
        print(format_compare(args.compare))
        return 0
    if not args.binary:
        parser.error("--binary or --compare is required")
    if not os.access(args.binary, os.X_OK):
        print(f"micro_summary: {args.binary} is not an executable; build it first "
              "(cmake --build --preset <preset> --target kvbench_micro)", file=sys.stderr)
        return 2
    try:
        doc = run_micro(args.binary, args.block_size, args.min_time, args.extra)
    except RuntimeError as e:
        print(f"micro_summary: {e}", file=sys.stderr)
        return 1
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
    print(format_table(doc, args.block_size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
