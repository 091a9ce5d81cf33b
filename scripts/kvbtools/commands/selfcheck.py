"""kvb selfcheck, run: what the command does with its arguments. Its command line and
--help: commands/parsers/selfcheck.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from kvbtools.core import host, output, results
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure import harness_cost

MIB = 1048576.0


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(SelfcheckRequest.of(args))


@dataclass(frozen=True)
class SelfcheckRequest:
    """kvb selfcheck's arguments as values."""
    kvbench: str | None
    reads: int
    small: int
    large: int
    max_ns_per_op: float
    max_rss_growth_mib: float
    max_rss_bytes_per_key: float
    json: str | None

    @staticmethod
    def of(args: argparse.Namespace) -> "SelfcheckRequest":
        return SelfcheckRequest(args.kvbench, args.reads, args.small, args.large,
                                args.max_ns_per_op, args.max_rss_growth_mib,
                                args.max_rss_bytes_per_key, args.json)


def run(req: SelfcheckRequest) -> int:
    output.check_outputs([("--json", req.json)],  # exit 2 before any run (docs/cli.md)
                         [("--kvbench", host.binary_path("kvbench", req.kvbench))])
    if min(req.reads, req.small) < 1 or req.large <= req.small:
        raise UsageError("--reads and --small must be positive and --large above --small")
    kvbench = host.binary("kvbench", req.kvbench, "--kvbench")
    fig: dict[str, Any] = {"schema": "kvb-selfcheck", "schema_version": 1, "kvbench": kvbench,
                           "reads": req.reads, "small": req.small, "large": req.large}
    fig.update(harness_cost.figures(kvbench, req.reads, req.small, req.large))
    growth = fig["rss_growth_bytes"]
    allowed = req.max_rss_growth_mib * MIB + req.max_rss_bytes_per_key * (req.large - req.small)
    failed = []
    if fig["null_readrandom_ns_per_op"] > req.max_ns_per_op:
        failed.append(f"null readrandom costs {fig['null_readrandom_ns_per_op']:.1f} ns/op, over "
                      f"--max-ns-per-op={req.max_ns_per_op:g}")
    if growth > allowed:
        failed.append(f"peak RSS grew by {growth / MIB:.1f} MiB from --num={req.small} to "
                      f"{req.large}, over the {allowed / MIB:.1f} MiB allowed")
    fig["failed"] = failed
    report(fig)
    if req.json:
        results.write_json(req.json, fig)
    if failed:
        raise RunError("; ".join(failed))
    return 0


def report(fig: dict[str, Any]) -> None:
    null_ns, mem_ns = fig["null_readrandom_ns_per_op"], fig["memory_readrandom_ns_per_op"]
    small, large = fig["peak_rss_small_bytes"] / MIB, fig["peak_rss_large_bytes"] / MIB
    print(f"harness cost: null readrandom {null_ns:.1f} ns/op; memory readrandom {mem_ns:.1f} "
          f"ns/op (same run); harness = {null_ns / mem_ns:.2f} of the memory engine's op")
    cpu = [fig[f"null_readrandom_{p}cpu_ns_per_op"] for p in harness_cost.SAMPLING]
    print(f"harness CPU: null readrandom {cpu[0]:.1f} ns/op of its thread's CPU timing every op, "
          f"{cpu[1]:.1f} with --latency_sample=16, {cpu[2]:.1f} untimed: timing an op costs "
          f"{cpu[0] - cpu[2]:.1f} ns")
    print(f"harness memory: null fillrandom peak RSS {small:.1f} MiB at --num={fig['small']}, "
          f"{large:.1f} MiB at --num={fig['large']}: {fig['rss_growth_bytes'] / MIB:+.2f} MiB, "
          f"{fig['rss_growth_bytes_per_key']:.3f} bytes per added key; ratio "
          f"{large / small:.3f}")
