"""`kvb compare --store URL --base host=A --other host=B`: the sides picked from the results store.

Each side is the stored runs matching all of its NAME=VALUE selectors (engine, benchmark, host,
preset, commit, lib.rocksdb.version, workload.num, document=HASH, ...: core/store_runs.py's one
vocabulary, which kvb store rm and --filter share); a run picked by two sides is refused. The documents are written to a temporary
directory as they were stored and handed to kvb compare's own loading, pooling and
statistics, so the table is the one compare prints for files. The runs of both sides must
share one workload (core/comparability.py), except in the fields the selectors name: those are
the axis (--base workload.compression=none --other workload.compression=zstd).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterator

from kvbtools.core import compare_sides, store as store_mod, store_runs
from kvbtools.core.errors import UsageError


def _documents(st: store_mod.Store, selectors: dict[str, str]) -> list[tuple[int, str, str]]:
    store_runs.check_names(st, selectors)
    where, params = store_runs.selector_where(selectors)
    if not where:
        raise UsageError("a side needs at least one NAME=VALUE selector, e.g. host=A")
    return [(int(r[0]), r[1], r[2]) for r in st.q(
        "SELECT d.id, d.hash, d.kind FROM documents d JOIN fingerprints f ON f.id = "
        "d.fingerprint_id WHERE d.complete = 1 AND " + " AND ".join(where)
        + " ORDER BY d.run_utc, d.id", params)]


@contextlib.contextmanager
def selected_files(location: str, sides: list[list[str]]
                   ) -> Iterator[tuple[list[list[str]], list[str], set[str]]]:
    """The documents of each side (its NAME=VALUE selectors, the base's first) in the store at
    `location`, as files in a temporary directory: (groups of paths, labels, the field names
    the selectors use: the axes of the comparison)."""
    with store_mod.open_store(location) as st, \
            tempfile.TemporaryDirectory(prefix="kvb-compare-store.") as tmp:
        picked = []
        for sel in sides:
            docs = _documents(st, store_runs.parse_selectors(sel, "selector"))
            if not docs:
                raise UsageError(f"no stored run matches {' '.join(sel)} in "
                                 f"{store_mod.shown(st.loc)}")
            picked.append(docs)
        compare_sides.check_stored([[h for _, h, _ in docs] for docs in picked],
                                   [" ".join(sel) for sel in sides])
        every = [d for docs in picked for d in docs]
        kinds = {k for _, _, k in every}
        if len(kinds) > 1:
            raise UsageError("the selected runs mix kvbench and kvbench_micro results: add "
                             "kind=kvbench or kind=gbench to the selectors")
        groups = []
        for docs in picked:
            paths = []
            for _, digest, _ in docs:
                _, raw = st.document(digest)
                path = os.path.join(tmp, f"{digest[:12]}.json")
                with open(path, "wb") as f:
                    f.write(raw)
                paths.append(path)
            groups.append(paths)
        named = {k for sel in sides for k in store_runs.parse_selectors(sel, "selector")}
        yield groups, [" ".join(sel) for sel in sides], named
