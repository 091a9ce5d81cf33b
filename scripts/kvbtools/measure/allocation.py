"""Where the next seconds of measuring go: one more round on every link, or more links.

A row's interval rests on link pairs (core/levels), so it narrows two ways: rounds shrink the
within-link variance, links shrink everything and add degrees of freedom; a round costs seconds,
a link a relink of every build (seconds from compiled objects; a build command in bisect's
generic mode). As Kalibera & Jones ("Rigorous benchmarking in reasonable time", ISMM 2013)
choose each level's repetitions from its variance and cost, the widest unresolved row's
components predict its width after one more round and after 1..MAX_LINKS more links, and the
step that narrows it most per second is taken. Only widths: no p-value, no place of an interval
(docs/compare.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from kvbtools.core.levels import Components

ROUND, LINK = "round", "link"


@dataclass(frozen=True)
class Costs:
    round_seconds: float       # one round: every series once
    link_seconds: float        # one more link of every build (math.inf: links cannot be added)


# Links one step may add: Yuen's trimmed t over link pairs (core/levels) is wider at 5 pairs
# than at 4 (trimming starts and takes 2 degrees of freedom), narrower from 6 on (at 30%, for two
# builds' links: 7 wider than 6 again), so one link at a time would stop at 4; a step looks up to
# this many ahead.
MAX_LINKS = 4


@dataclass(frozen=True)
class Choice:
    step: str                  # ROUND (one more round on every link) or LINK
    why: str                   # for the progress line
    links: int = 1             # LINK: how many links to add


def choose(rows: Sequence[Components], links: int, rounds_per_link: float,
           costs: Costs) -> Choice:
    """The step that narrows the widest of `rows` most per second. Without an estimate of the
    components (rows empty), rounds until links can be split from rounds."""
    if not rows:
        return Choice(ROUND, "no variance estimate yet")
    c = max(rows, key=lambda x: x.width(links, rounds_per_link))
    now = c.width(links, rounds_per_link)
    r = max(1, round(rounds_per_link))
    per_round = (now - c.width(links, rounds_per_link + 1)) / (links * costs.round_seconds)
    link_cost = costs.link_seconds + r * costs.round_seconds
    per_link, add = 0.0, 1
    for m in range(1, MAX_LINKS + 1) if math.isfinite(link_cost) else ():
        gain = (now - c.width(links + m, rounds_per_link)) / (m * link_cost)
        if gain > per_link:
            per_link, add = gain, m
    share = c.between / (c.between + c.within) if c.between + c.within > 0 else 0.0
    link = ("the next link is already linked (no relink)" if costs.link_seconds == 0
            else f"a link {costs.link_seconds:.1f} s")
    why = (f"{share:.0%} of a round's variance is between links; a round costs "
           f"{costs.round_seconds:.1f} s, {link}")
    if per_link > per_round:
        return Choice(LINK, why, add)
    return Choice(ROUND, why)
