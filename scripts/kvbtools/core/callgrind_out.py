"""valgrind's callgrind output files, read: an instruction total, the dumps kvbench_micro's
marked loops leave (bench/callgrind_marks.h) as instructions per iteration, and the dumps of
kvbench's marked KV loops and benchmark windows (src/common/instruction_marks.h) as
instructions per op of each role and of the engine's background threads, added to kvbench's
JSON. measure/callgrind.py runs valgrind and calls these.

kvbench's KV runs, under callgrind with instrumentation off until a benchmark starts and one
output file per thread: each workload thread dumps its own loop ("kvbench loop role=R thread=I
ops=N") and the runner dumps every thread at the end of each benchmark run ("kvbench window
benchmark=B run=K warmup=W"), where what the workload threads and the runner leave is zero:
that dump is the engine's background threads'. Output files are <out>.<part>-<thread>, parts
numbered in the order they were dumped.
"""
from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import metrics
from kvbtools.core.errors import RunError

TOTALS = re.compile(r"^(?:totals|summary):\s+(\d+)", re.MULTILINE)
DESC = re.compile(r"^desc: Trigger: Client Request: kvbench_micro iterations=(\d+)$", re.MULTILINE)
KV_METRICS = metrics.CALLGRIND_KV


def totals(path: str) -> int:
    """The instruction total of one callgrind output file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        m = TOTALS.search(f.read())
    if not m:
        raise RunError(f"no totals line in {path}")
    return int(m.group(1))


def micro_dumps(out_file: str) -> list[tuple[int, int]]:
    """(iterations, instructions) of every measured loop kvbench_micro marked
    (bench/callgrind_marks.h), in the order they ran."""
    def part(path: str) -> int:
        return int(path.rsplit(".", 1)[1])
    out = []
    parts = [p for p in glob.glob(glob.escape(out_file) + ".*") if p.rsplit(".", 1)[1].isdigit()]
    for path in sorted(parts, key=part):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        d, t = DESC.search(text), TOTALS.search(text)
        if d and t:
            out.append((int(d.group(1)), int(t.group(1))))
    return out


def per_iteration(dumps: list[tuple[int, int]], names: list[tuple[str, int]]) -> dict[str, float]:
    """Instructions per iteration of each benchmark. `names`: (name, iterations) of the
    benchmarks that ran their loop, in run order (the JSON's). Google Benchmark runs each one with
    growing iteration counts, so a count that does not grow starts the next benchmark; the last
    two runs' difference cancels the loop's fixed cost. The last run of each must match the
    JSON's iterations, or the dumps are not what this reads them as (RunError)."""
    groups: list[list[tuple[int, int]]] = []
    for d in dumps:
        if not groups or d[0] <= groups[-1][-1][0]:
            groups.append([])
        groups[-1].append(d)
    if len(groups) != len(names) or any(g[-1][0] != n for g, (_, n) in zip(groups, names)):
        raise RunError(f"callgrind dumps do not line up with the benchmarks run: "
                       f"{len(groups)} measured loop(s) for {len(names)} benchmark(s)")
    out = {}
    for g, (name, _) in zip(groups, names):
        if len(g) >= 2:
            (n1, t1), (n2, t2) = g[-2], g[-1]
            out[name] = (t2 - t1) / (n2 - n1)
        else:
            out[name] = g[0][1] / g[0][0]
    return out


def block_bytes(name: str) -> int | None:
    """The bytes one iteration processes, from <algorithm>/<variant>/<block bytes>[/cold]."""
    parts = name.split("/")
    return int(parts[2]) if len(parts) >= 3 and parts[2].isdigit() else None

LOOP = re.compile(r"^desc: Trigger: Client Request: kvbench loop role=(\S+) thread=(\d+) "
                  r"ops=(\d+)$", re.MULTILINE)
WINDOW = re.compile(r"^desc: Trigger: dump kvbench window benchmark=(\S+) run=(-?\d+) "
                    r"warmup=([01])$", re.MULTILINE)
# Only "totals:": after a zeroing, callgrind's "summary:" line of a thread can wrap below zero.
THREAD_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)
PART_FILE = re.compile(r"\.(\d+)-(\d+)$")


@dataclass
class KvWindow:
    """One benchmark run as callgrind saw it: its loops and its background."""
    benchmark: str
    run: int
    warmup: bool
    loops: list[tuple[str, int, int, int]] = field(default_factory=list)  # role, i, ops, count
    background: dict[int, int] = field(default_factory=dict)  # callgrind thread -> count

    def role(self, name: str) -> tuple[int, int, int]:
        """(threads, ops, instructions) of one role's loops."""
        mine = [lp for lp in self.loops if lp[0] == name]
        return len(mine), sum(lp[2] for lp in mine), sum(lp[3] for lp in mine)


def kv_windows(out_file: str) -> list[KvWindow]:
    """Every benchmark run kvbench marked, in run order, from the dumps of `out_file`. A loop
    belongs to the first window dumped after it."""
    parts: dict[int, list[tuple[int, str]]] = {}
    for path in glob.glob(glob.escape(out_file) + ".*-*"):
        m = PART_FILE.search(path)
        if m:
            with open(path, encoding="utf-8", errors="replace") as f:
                parts.setdefault(int(m.group(1)), []).append((int(m.group(2)), f.read()))
    windows: list[KvWindow] = []
    loops: list[tuple[str, int, int, int]] = []
    for part in sorted(parts):
        files = [(thread, text, THREAD_TOTALS.search(text)) for thread, text in parts[part]]
        counts = {thread: int(t.group(1)) if t else 0 for thread, _, t in files}
        window = next((m for _, text, _ in files if (m := WINDOW.search(text))), None)
        if window is not None:
            windows.append(KvWindow(window.group(1), int(window.group(2)),
                                    window.group(3) == "1", loops, counts))
            loops = []
            continue
        for thread, text, _ in files:
            if (lp := LOOP.search(text)) is not None:
                loops.append((lp.group(1), int(lp.group(2)), int(lp.group(3)), counts[thread]))
    if loops:
        raise RunError(f"callgrind: {len(loops)} measured loop(s) after the last benchmark run's "
                       "end: the run did not end as kvbench ends one")
    return windows


def annotate_kv(doc: dict[str, Any], windows: list[KvWindow]) -> None:
    """Adds callgrind.instructions_per_op to each role and callgrind.background_* to each
    result of kvbench's JSON `doc`, from the measured (not warm-up) windows, which must line up
    with the results that ran threads (RunError otherwise: the counts would be misattributed)."""
    measured = [w for w in windows if not w.warmup]
    rows = [r for r in doc["results"] if r.get("roles")]
    if [w.benchmark for w in measured] != [r["benchmark"] for r in rows]:
        raise RunError("callgrind's dumps do not line up with kvbench's results: "
                       f"{[w.benchmark for w in measured]} counted, "
                       f"{[r['benchmark'] for r in rows]} reported")
    for w, r in zip(measured, rows):
        all_ops = 0
        for role in r["roles"]:
            threads, ops, count = w.role(role["role"])
            if threads != role["threads"] or ops != role["ops"]:
                raise RunError(f"callgrind counted {threads} {role['role']} thread(s) and {ops} "
                               f"ops in {w.benchmark}; kvbench reports {role['threads']} and "
                               f"{role['ops']}")
            role["callgrind"] = {"instructions": count,
                                 "instructions_per_op": round(count / ops, 1) if ops else 0}
            all_ops += ops
        bg = sum(w.background.values())
        r["callgrind"] = {"background_instructions": bg,
                          "background_threads": sum(1 for c in w.background.values() if c),
                          "background_instructions_per_op": round(bg / all_ops, 1)
                          if all_ops else 0}
    described = {m.get("path") for m in doc.setdefault("metrics", [])}
    for path in KV_METRICS:
        if path not in described:
            doc["metrics"].append({"path": path, "unit": "instructions/op", "better": "lower"})
