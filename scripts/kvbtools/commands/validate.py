"""kvb validate: check kvbench run documents against the whole schema of docs/json.md.

Every problem of every file is listed, one `FILE: $.json.path: message` line each (a missing
field, a wrong type, null, NaN or Infinity, a number whose name gives no unit, a malformed
"metrics" entry); exit 2 when any file has one. Google Benchmark JSON (kvbench_micro) is checked
for the fields kvb reads. A file that conforms prints `FILE: OK`.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.core import results
from kvbtools.core.errors import UsageError


def register(sub: Any) -> None:
    p = command.add(sub, "validate", __doc__, lambda args: run(tuple(args.files)))
    p.add_argument("files", nargs="+", metavar="FILE.json")


def run(files: tuple[str, ...]) -> int:
    """Every file checked; UsageError listing every problem of every file that has one."""
    lines: list[str] = []
    bad = 0
    for path in files:
        try:
            found = [f"{path}: {p}" for p in
                     results.problems(results.open_document(path), full=True)]
        except UsageError as e:
            found = [str(e)]
        if found:
            bad += 1
            lines.extend(found)
        else:
            print(f"{path}: OK")
    if bad:
        lines.append(f"{bad} of {len(files)} file(s) do not conform to docs/json.md")
        raise UsageError("\n".join(lines))
    return 0
