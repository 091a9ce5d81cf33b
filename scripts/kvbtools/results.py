"""Loading kvbench run documents (docs/json.md)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class ResultError(Exception):
    """A file that is not a usable kvbench result."""


@dataclass
class Row:
    """One role of one benchmark of one run: the unit the tables show."""
    engine: str
    reference: bool
    benchmark: str
    role: str
    roles_in_benchmark: int
    data: dict[str, Any]

    @property
    def label(self) -> str:
        return self.benchmark if self.roles_in_benchmark == 1 else f"{self.benchmark}[{self.role}]"


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ResultError(f"{path}: cannot read: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ResultError(f"{path}: not UTF-8 text (byte {e.start}): not a kvbench JSON "
                          "document") from e
    except (json.JSONDecodeError, RecursionError) as e:
        raise ResultError(f"{path}: not JSON: {e}") from e
    if not isinstance(doc, dict) or doc.get("schema") != "kvbench-run":
        raise ResultError(f"{path}: not a kvbench run document")
    if doc.get("schema_version") != 1:
        raise ResultError(f"{path}: schema_version {doc.get('schema_version')} is not supported")
    return doc


def rows(doc: dict[str, Any]) -> list[Row]:
    engine = doc["context"]["engine"]
    out = []
    for result in doc["results"]:
        for role in result["roles"]:
            out.append(Row(engine["name"], bool(engine.get("reference")), result["benchmark"],
                           role["role"], len(result["roles"]), {**role, "_result": result}))
    return out
