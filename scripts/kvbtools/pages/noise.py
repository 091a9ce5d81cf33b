"""What every page says about noise (docs/report.md): kvbench's own verdict on each of its runs
(context.environment.noisy and noisy_reason, docs/json.md: the hypervisor's steal above 2% or
other processes above 10% of the CPUs while it ran), and for kvbench_micro files, which measure
neither, wall time well above CPU time (core/environment.busy_ratio). The top of a page lists
them; a figure that draws a noisy run says so under it and in it (figures.Figure.warnings).
"""
from __future__ import annotations

import os
from typing import Any

from kvbtools.core import environment, results
from kvbtools.core.errors import UsageError
from kvbtools.core.samples import Side

TITLE = "Noisy runs (kvbench's own verdict: other work on the machine while it measured)"


def run_reason(ctx: dict[str, Any]) -> str:
    """Why kvbench called the run of this context noisy; "" when it did not (or could not
    tell: a run that did not finish, a file from before the audit)."""
    env = ctx.get("environment")
    if not isinstance(env, dict) or env.get("noisy") is not True:
        return ""
    return str(env.get("noisy_reason") or "kvbench flagged it noisy and gave no reason")


def file_reasons(paths: list[str]) -> tuple[int, dict[str, str]]:
    """How many of these files are kvbench runs, and file name -> reason for the noisy ones; a
    file that cannot be read (gone, cut) is left out: the page stands without its verdict."""
    n, out = 0, {}
    for path in paths:
        try:
            doc = results.read_json(path)
        except UsageError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("context"), dict) and "results" in doc:
            n += 1
            why = run_reason(doc["context"])
            if why:
                out[os.path.basename(path)] = why
    return n, out


def point_reason(attributes: dict[str, str]) -> str:
    """run_reason of a point of the results store, from its context attributes
    (core/fingerprint.py keeps every context field as `context.<path>`)."""
    if attributes.get("context.environment.noisy") != "true":
        return ""
    return attributes.get("context.environment.noisy_reason") or "no reason recorded"


def run_warning(label: str, reason: str) -> str:
    """The page's line for one noisy run."""
    return (f"{label}: this run was noisy: {reason}. Its numbers may be low and spread more "
            "than usual; rerun it on a quiet machine before comparing it.")


def figure_warning(noisy: dict[str, str]) -> list[str]:
    """The line under a figure that draws these noisy runs (label -> reason)."""
    if not noisy:
        return []
    one = len(noisy) == 1
    return [("Noisy run" if one else "Noisy runs") + ", by kvbench's own measure: "
            + "; ".join(f"{label}: {reason}" for label, reason in noisy.items())
            + (". Its" if one else ". Their") + " lines and bars may be low."]


def side_reason(side: Side) -> str:
    """Why a side of a comparison is noisy ("2 of 5 runs noisy: ..."; a kvbench_micro side:
    wall time above CPU time), or ""."""
    if side.kind == results.KVBENCH:
        reasons = [r for r in (run_reason(ctx) for ctx in side.contexts) if r]
        if not reasons:
            return ""
        return f"{len(reasons)} of {len(side.contexts)} run(s) noisy, e.g. {reasons[0]}"
    ratio, bench = environment.busy_ratio(side)
    if ratio <= environment.BUSY_RATIO:
        return ""
    return (f"wall time {ratio:.2f}x CPU time ({bench}): the machine was busy; the rates are per "
            "CPU second and hide it (kvbench_micro measures no steal or foreign CPU time)")


def side_warnings(sides: list[Side]) -> list[str]:
    """One line per noisy side, for the top of a comparison page."""
    return [f"{s.label}: {side_reason(s)}" for s in sides if side_reason(s)]
