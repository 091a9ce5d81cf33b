"""The budget of a comparison of builds: --repeats, --max-rounds and --max-time as one value,
which commands/arguments.py makes and measure/round_loop.py's loop spends."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    first: int                 # rounds always run (--repeats)
    max_rounds: int            # rounds at most (>= first)
    max_seconds: float | None  # --max-time; None: as the command's default says
