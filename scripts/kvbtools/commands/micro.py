"""kvb micro, run: what the command does with its arguments. Its command line and
--help: commands/parsers/micro.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

from kvbtools.core import host, output, results, summary, table
from kvbtools.core.comparison import INPUT_KEYS
from kvbtools.core.errors import UsageError
from kvbtools.measure import micro_run


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(MicroRequest.of(args))


@dataclass(frozen=True)
class MicroRequest:
    """kvb micro's arguments as values."""
    binary: str | None
    compare: tuple[str, ...]     # JSON files to compare instead of a run
    block_size: int
    min_time: float
    json: str | None
    extra: tuple[str, ...]       # kvbench_micro flags after --

    @staticmethod
    def of(args: argparse.Namespace) -> "MicroRequest":
        return MicroRequest(args.binary, tuple(args.compare or ()), args.block_size,
                            args.min_time, args.json, tuple(args.extra))


def function_name(benchmark_name: str) -> str:
    """'crc32c/hw_3way/4096' -> 'crc32c/hw_3way' (and keeps a /cold marker)."""
    parts = benchmark_name.split("/")
    cold = parts[-1] == "cold"
    if cold:
        parts = parts[:-1]
    return "/".join(parts[:-1]) + (" (cold)" if cold else "")


# The ceiling row: a checksum or codec reads its input at least once, so reading the same block
# with the widest loads (memory/read, bench/memory_bench.cc) bounds every row of its block size.
CEILING = "memory/read"


def ceiling_name(benchmark_name: str) -> str:
    """'crc32c/fold_512/4096' -> 'memory/read/4096' (a /cold suffix stays)."""
    parts = benchmark_name.split("/")
    cold = parts[-1] == "cold"
    size = parts[-2] if cold else parts[-1]
    return f"{CEILING}/{size}" + ("/cold" if cold else "")


def of_ceiling(gbps: dict[str, float | None], name: str) -> str:
    """The row's fraction of the ceiling row of its block size, or '-' without one."""
    value, ceiling = gbps.get(name), gbps.get(ceiling_name(name))
    if not isinstance(value, float) or not isinstance(ceiling, float) or ceiling <= 0:
        return "-"
    return f"{value / ceiling:.2f}"


def format_table(doc: dict[str, Any], block_size: int) -> str:
    lines = [
        summary.micro_context(doc["context"]),
        f"{block_size}-byte blocks; GB/s = 10^9 bytes/s of uncompressed input; "
        f"of read = fraction of {CEILING} (the ceiling); ratio = compressed/input",
        "",
    ]
    gbps = gbps_by_name(doc)
    rows: list[list[str]] = []
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = function_name(b["name"])
        if b.get("error_occurred"):
            rows.append([name, "-", "", "", "skipped: " + b.get("error_message", "")])
            continue
        ratio = b.get("compression_ratio")
        rows.append([name, f"{b.get('bytes_per_second', 0.0) / 1e9:.2f}",
                     of_ceiling(gbps, b["name"]), "" if ratio is None else f"{ratio:.3f}",
                     b.get("label", "")])
    lines += table.render(rows, header=["function", "GB/s", "of read", "ratio", "what"],
                          left=(0, 4))
    return "\n".join(lines)


def gbps_by_name(doc: dict[str, Any]) -> dict[str, float | None]:
    """GB/s per benchmark name: the median aggregate if present, else the mean of the runs;
    None for a benchmark that was skipped with an error."""
    runs: dict[str, list[float]] = {}
    medians: dict[str, float] = {}
    skipped: set[str] = set()
    for b in doc["benchmarks"]:
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


def column_titles(docs: list[results.Document]) -> list[str]:
    presets = [d.context.get("kvbench_preset", "") for d in docs]
    if all(presets) and len(set(presets)) == len(presets):
        return presets
    return [os.path.basename(d.path) for d in docs]


def format_compare(docs: list[results.Document]) -> str:
    titles = column_titles(docs)
    lines: list[str] = []
    contexts = [d.context for d in docs]
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
    values = [gbps_by_name(d.doc) for d in docs]
    names: list[str] = []
    for v in values:
        names.extend(n for n in v if n not in names)
    lines.append("")
    lines.append(f"GB/s (10^9 bytes/s); of read = fraction of {CEILING} of the same block size "
                 f"in the same file; ratio = column / {titles[0]}")
    rows: list[list[str]] = []
    for name in names:
        row = [name]
        for v in values:
            g = v.get(name, "absent")
            row.append("absent" if g == "absent" else "skipped" if g is None else f"{g:.2f}")
        row.extend(of_ceiling(v, name) for v in values)
        base = values[0].get(name)
        for v in values[1:]:
            g = v.get(name)
            ok = isinstance(base, float) and isinstance(g, float) and base > 0
            row.append(f"{g / base:.2f}x" if ok else "-")  # type: ignore[operator]
        rows.append(row)
    lines += table.render(rows, header=["benchmark", *titles, *(f"of read {t}" for t in titles),
                                        *(f"ratio {t}" for t in titles[1:])])
    return "\n".join(lines)


def run(req: MicroRequest) -> int:
    output.check_outputs(  # exit 2 before any work (docs/cli.md)
        [("--json", req.json)],
        [("--compare", f) for f in req.compare] if req.compare else
        [("--binary", host.binary_path("kvbench_micro", req.binary))])
    if req.compare:
        if req.binary or req.extra or req.json:
            raise UsageError("--compare reads files: --binary, --json and kvbench_micro flags "
                             "do not apply")
        print(format_compare(results.load_all(list(req.compare), [results.GBENCH])))
        return 0
    if req.block_size < 1 or req.min_time <= 0:
        raise UsageError("--block-size and --min-time must be positive")
    binary = host.binary("kvbench_micro", req.binary, "--binary")
    d = micro_run.run_micro(binary, req.block_size, req.min_time, list(req.extra))
    if req.json:
        results.write_json(req.json, d.doc)
    print(format_table(d.doc, req.block_size))
    return 0
