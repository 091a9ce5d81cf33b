"""cmake/deps.json as it is written: its entries as dicts, read once. core/manifest.py makes its
types of them; kvb's parsers read the names they list in --help here (kvb's start: manifest's
imports are more than a `kvb versions --help` should load).
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

from kvbtools.core.errors import RunError
from kvbtools.core.version import ROOT

DEPS_JSON = os.path.join(ROOT, "cmake", "deps.json")


def unreadable(e: Exception) -> RunError:
    return RunError(f"{DEPS_JSON}: cannot read the dependency manifest: {e}")


@lru_cache(maxsize=None)
def entries() -> tuple[dict[str, Any], ...]:
    """Every entry of cmake/deps.json, in its order; RunError when the file is not a
    kvbench-deps version 1 document."""
    try:
        with open(DEPS_JSON, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("schema") != "kvbench-deps" or doc.get("schema_version") != 1:
            raise ValueError("not a kvbench-deps version 1 document")
        return tuple(doc["deps"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise unreadable(e) from None


def buildable() -> list[str]:
    """manifest.buildable()'s names, from the entries as written: the libraries kvb can build from
    source or take from a prefix (matrix, versions, bisect)."""
    try:
        return [d["name"] for d in entries() if d["source_build"]]
    except (KeyError, TypeError) as e:
        raise unreadable(e) from None
