"""What every page says about noise (docs/report.md): kvbench's own verdict on each of its runs
(context.environment.noisy and noisy_reason, docs/json.md: the hypervisor's steal above 2% or
other processes above 10% of the CPUs while it ran), and for kvbench_micro files, which measure
neither, wall time well above CPU time (core/environment.busy_ratio). The top of a page lists
them, once, in a box (htmlpage.noise_box, its anchor ANCHOR); a figure that draws a noisy run
carries a marker that links there, and a figure file the reason under it (figures.Figure.noisy).
"""
from __future__ import annotations

import os

from kvbtools.core import environment, results
from kvbtools.core.errors import UsageError
from kvbtools.core.samples import Side

TITLE = "Noisy runs (kvbench's own verdict: other work on the machine while it measured)"
ANCHOR = "noisy-runs"   # the box's id, where every figure's marker links
# A marker names at most this many of the noisy runs its figure draws.
MARKED = 6


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
            why = environment.noisy_reason(doc["context"])
            if why:
                out[os.path.basename(path)] = why
    return n, out


def point_reason(attributes: dict[str, str]) -> str:
    """environment.noisy_reason of a point of the results store, from its context attributes
    (core/fingerprint.py keeps every context field as `context.<path>`)."""
    if attributes.get("context.environment.noisy") != "true":
        return ""
    return attributes.get("context.environment.noisy_reason") or "no reason recorded"


def marker(noisy: dict[str, str]) -> str:
    """A figure's mark of the noisy runs it draws (label -> reason), without the reason (said
    once, in the page's box): 'noisy: rocksdb, lmdb'."""
    labels = list(noisy)
    more = len(labels) - MARKED
    return "noisy: " + ", ".join(labels[:MARKED]) + (f" and {more} more" if more > 0 else "")


def figure_warning(noisy: dict[str, str]) -> list[str]:
    """The line under a figure file that draws these noisy runs (label -> reason)."""
    if not noisy:
        return []
    one = len(noisy) == 1
    return [("Noisy run" if one else "Noisy runs") + ", by kvbench's own measure: "
            + "; ".join(f"{label}: {reason}" for label, reason in noisy.items())
            + (". Its" if one else ". Their") + " lines and bars may be low."]


def side_warnings(sides: list[Side]) -> list[str]:
    """One line per noisy side, for the top of a comparison page."""
    return [f"{s.label}: {why}" for s in sides for why in [environment.side_reason(s)] if why]
