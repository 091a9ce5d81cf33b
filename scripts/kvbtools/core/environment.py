"""The environment audit of result files (docs/json.md, "The environment audit"), read by the
comparison: facts that make two sides not comparable, runs flagged noisy, and kvbench_micro runs
whose wall time is far above their CPU time (a busy machine, hidden by CPU-time rates)."""
from __future__ import annotations

import statistics
from typing import Any

from kvbtools.core.samples import Side

# Facts that change what the code measures: two sides that differ in one are not comparable.
COMPARABLE = ("cpu_model", "kernel", "governor", "thp", "smt", "virtualization")
# kvbench_micro: wall time above CPU time by more than this factor says the machine was busy.
BUSY_RATIO = 1.25


def facts(ctx: dict[str, Any]) -> dict[str, str]:
    """The audit's facts of one file: kvbench's context.environment, kvbench_micro's flat
    environment.<fact> keys; a kvbench file from before the audit gives its cpu_model and
    kernel."""
    env = ctx.get("environment")
    if isinstance(env, dict):
        return {k: v for k, v in env.items() if isinstance(v, str)}
    out = {k[len("environment."):]: v for k, v in ctx.items()
           if k.startswith("environment.") and k.count(".") == 1 and isinstance(v, str)}
    if not out and isinstance(ctx.get("build"), dict):
        out = {k: ctx[k] for k in ("cpu_model", "kernel") if isinstance(ctx.get(k), str)}
    return out


def not_comparable(sides: list[Side]) -> list[str]:
    """One 'not comparable:' line per fact of COMPARABLE whose values differ between (or within)
    the sides; a fact a side does not record is not judged."""
    lines = []
    for fact in COMPARABLE:
        per_side = {s.label: sorted({facts(ctx)[fact] for ctx in s.contexts
                                     if fact in facts(ctx)}) for s in sides}
        if any(not v for v in per_side.values()):
            continue
        if len({v for vals in per_side.values() for v in vals}) > 1:
            shown = "; ".join(f"{label} {' / '.join(repr(v) for v in vals)}"
                              for label, vals in per_side.items())
            lines.append(f"not comparable: {fact} differs ({shown}): the sides ran on different "
                         "machines or set-ups, so their ratios mix the code with the host")
    return lines


def busy_ratio(side: Side) -> tuple[float, str]:
    """kvbench_micro: the largest median real_time / cpu_time over the side's benchmarks, and
    that benchmark; (0, '') when the side has no times."""
    worst, name = 0.0, ""
    for (bench, key), real in side.values.items():
        cpu = side.values.get((bench, "cpu_time"))
        if key != "real_time" or not cpu or statistics.median(cpu) <= 0:
            continue
        r = statistics.median(real) / statistics.median(cpu)
        if r > worst:
            worst, name = r, bench
    return worst, name


def _load(ctx: dict[str, Any]) -> float | None:
    """The one-minute load average at the start of a kvbench_micro run (Google Benchmark's)."""
    v = ctx.get("load_avg")
    return float(v[0]) if isinstance(v, list) and v and isinstance(v[0], (int, float)) else None


def noise_notes(side: Side) -> list[str]:
    """The 'noisy:' note of one side, and a WARNING when its wall time exceeds its CPU time."""
    lines = []
    envs = [ctx.get("environment") for ctx in side.contexts]
    kv = [e for e in envs if isinstance(e, dict)]
    if kv:
        noisy = [e for e in kv if e.get("noisy")]
        measured = [e for e in kv if isinstance(e.get("during"), dict)
                    and e["during"].get("measured")]
        if noisy:
            lines.append(f"noisy: {side.label}: {len(noisy)} of {len(kv)} run(s) noisy, e.g. "
                         f"{noisy[0].get('noisy_reason', '')}")
        elif measured:
            lines.append(f"noisy: {side.label}: none of {len(measured)} run(s) (steal <= 2%, "
                         "other processes <= 10% of the CPUs)")
        else:
            lines.append(f"noisy: {side.label}: not measured (runs that did not finish)")
        return lines
    if any("kvbench_instructions" in ctx for ctx in side.contexts):
        lines.append(f"noisy: {side.label}: not judged: instruction counts (--instructions) do "
                     "not depend on what else the machine does")
    elif side.kind != "kvbench":
        lines += _micro_notes(side)
    else:
        lines.append(f"noisy: {side.label}: not recorded (files from before the environment "
                     "audit)")
    return lines


def _micro_notes(side: Side) -> list[str]:
    """kvbench_micro's 'noisy:' line: its verdict by wall time against CPU time (busy above
    BUSY_RATIO), then the figure (a ratio near 1.00 is said as "not busy", not as a bound "up
    to 1.00x" that read like a finding), and a WARNING when busy."""
    loads = [x for x in (_load(ctx) for ctx in side.contexts) if x is not None]
    ratio, bench = busy_ratio(side)
    if not ratio:
        verdict = "not judged: no benchmark has both wall and CPU time"
    elif ratio > BUSY_RATIO:
        verdict = (f"busy: wall time up to {ratio:.2f}x CPU time ({bench}), above "
                   f"{BUSY_RATIO:g}x")
    else:
        verdict = (f"not busy by wall time: at most {ratio:.2f}x CPU time (busy above "
                   f"{BUSY_RATIO:g}x)")
    text = (f"noisy: {side.label}: {verdict}; kvbench_micro measures no steal or foreign CPU "
            "time" + (f"; load average at the start up to {max(loads):.1f}" if loads else ""))
    if ratio <= BUSY_RATIO:
        return [text]
    return [text, f"WARNING: {side.label}: wall time {ratio:.2f}x CPU time ({bench}): the "
                  "machine was busy; the rates below are per CPU second and do not show it"]


def notes(sides: list[Side]) -> list[str]:
    """Every line the comparison prints about the sides' environments."""
    out = not_comparable(sides)
    for s in sides:
        out.extend(noise_notes(s))
    return out
