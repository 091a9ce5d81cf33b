"""kvb validate: check kvbench run documents against the whole schema of docs/json.md.

Every problem of every file is listed, one `FILE: $.json.path: message` line each (a missing
field, a wrong type, null, NaN or Infinity, a number whose name gives no unit, a malformed
"metrics" entry); exit 2 when any file has one. Google Benchmark JSON (kvbench_micro) is checked
for the fields kvb reads. A file that conforms prints `FILE: OK`.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "validate", __doc__, "main")
    p.add_argument("files", nargs="+", metavar="FILE.json")
