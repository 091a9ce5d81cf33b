"""kvb micro's run: kvbench_micro on one block size with a short minimum time, its Google
Benchmark JSON checked (commands/micro.py prints GB/s per function)."""
from __future__ import annotations

import os
import subprocess
import tempfile

from kvbtools.core import results
from kvbtools.core.errors import RunError, UsageError, failure_reason


def run_micro(binary: str, block_size: int, min_time: float,
              extra: list[str]) -> results.Document:
    """Runs the binary on one block size; its JSON document, checked."""
    with tempfile.TemporaryDirectory(prefix="kvb-micro.") as tmp:
        out = os.path.join(tmp, "micro.json")
        cmd = [binary, f"--benchmark_filter=/{block_size}(/cold)?$",
               f"--benchmark_min_time={min_time}", f"--block_sizes={block_size}",
               f"--benchmark_out={out}", "--benchmark_out_format=json", *extra]
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        why = failure_reason(proc.stderr, "kvbench_micro")
        if proc.returncode == 2:  # kvbench_micro's usage error: a flag given after --
            raise UsageError(f"kvbench_micro refused its flags: {why}")
        if proc.returncode != 0:  # the reason first, then what ran
            rest = proc.stderr.strip()
            raise RunError(f"kvbench_micro failed (exit {proc.returncode}): {why}\n"
                           f"  ran: {' '.join(cmd)}"
                           + (f"\n  its stderr:\n{rest}" if "\n" in rest else ""))
        return results.load_written(out, results.GBENCH, binary)
