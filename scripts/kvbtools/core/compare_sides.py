"""kvb compare's sides hold distinct runs (docs/compare.md, "Sides"): no file or document is on two
sides, or twice on one. A run compared with itself gives ratios of 1.00 and "no change" that say
nothing, and a file pooled twice into a side counts its repeats twice (a narrower interval, a
smaller p than the runs give). Both are refused as bad input (exit 2), naming the file or
document, before any figure is printed.

A file is the same as another when both paths lead to one file (os.path.realpath) or when they
hold the same document: the same canonical JSON, whose SHA-256 is the store's document hash
(core/fingerprint.py), so a copy or a re-indented file is found too.
"""
from __future__ import annotations

import hashlib
import os
from typing import Sequence

from kvbtools.core.errors import UsageError
from kvbtools.core.fingerprint import canonical
from kvbtools.core.results import Document


def side_name(i: int) -> str:
    return "the base" if i == 0 else f"side {i + 1}"


def _where(first: tuple[int, str], second: tuple[int, str]) -> str:
    """'on two sides (the base and side 2)'; the paths too when they are spelled otherwise."""
    (i, a), (j, b) = first, second
    paths = "" if a == b else f": {a} and {b}"
    return f"twice in {side_name(i)}{paths}" if i == j else \
        f"on two sides ({side_name(i)} and {side_name(j)}{paths})"


def check_files(groups: Sequence[Sequence[str]]) -> None:
    """Refuses a path (after links) given twice: on two sides or twice on one."""
    seen: dict[str, tuple[int, str]] = {}
    for i, group in enumerate(groups):
        for path in group:
            real = os.path.realpath(path)
            if real in seen:
                raise UsageError(f"{path} is {_where(seen[real], (i, path))}: a run compared "
                                 "with itself (or pooled twice) says nothing; give each run "
                                 "once")
            seen[real] = (i, path)


def document_hash(d: Document) -> str:
    """The SHA-256 of the document's canonical JSON: the results store's document hash."""
    return hashlib.sha256(canonical(d.doc).encode()).hexdigest()


def check_documents(groups: Sequence[Sequence[Document]]) -> None:
    """Refuses two files that hold the same document (a copy), on two sides or on one."""
    seen: dict[str, tuple[int, str]] = {}
    for i, group in enumerate(groups):
        for d in group:
            digest = document_hash(d)
            if digest in seen:
                first = seen[digest]
                raise UsageError(f"{d.path} holds the same document as {first[1]} (document "
                                 f"{digest[:12]}): it is {_where(first, (i, d.path))}; a run "
                                 "compared with itself (or pooled twice) says nothing; give "
                                 "each run once")
            seen[digest] = (i, d.path)


def check_stored(picked: Sequence[Sequence[str]], selectors: Sequence[str]) -> None:
    """The store's sides (--store): refuses a stored document (its hash) that the selectors of
    two sides both pick."""
    seen: dict[str, int] = {}
    for i, hashes in enumerate(picked):
        for digest in hashes:
            if digest in seen:
                j = seen[digest]
                raise UsageError(f"stored run {digest[:12]} is on two sides: {side_name(j)} "
                                 f"({selectors[j]}) and {side_name(i)} ({selectors[i]}) both "
                                 "select it; make the selectors exclusive (e.g. name the "
                                 "field the sides differ in)")
            seen[digest] = i
