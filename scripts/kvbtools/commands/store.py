"""kvb store, run: what the command does with its arguments. Its command line and
--help: commands/parsers/store.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
import sys

from kvbtools.core import store_file, store_runs
from kvbtools.core.errors import UsageError
from kvbtools.core.store import add_files, location, open_store, parse_pairs, shown, sqlite_file


# Each subcommand takes its few arguments as plain values (store: --store, None for the default).

def cmd_add(store: str | None, files: list[str], attrs: list[str] | None) -> int:
    add_files(files, store, parse_pairs(attrs, "--attr"))
    return 0


def cmd_rm(store: str | None, selected: list[str], dry_run: bool) -> int:
    ids, selectors = store_runs.split_arguments(selected)
    with open_store(store, write=not dry_run) as st:
        where = shown(st.loc)
        if dry_run:
            runs = store_runs.pick(st, ids, selectors)
        else:
            with st.write(exclusive=True) as tx:
                runs = store_runs.pick(st, ids, selectors)
                if runs:
                    store_runs.remove(st, runs)
                    tx.ok()
    if not runs:
        raise UsageError(f"no stored run in {where} matches {' '.join(selected)}: nothing was "
                         "removed")
    # Said only now that the transaction committed (or, --dry-run, that nothing will be).
    for r in runs:
        print(f"{'would remove' if dry_run else 'removed'} {r.describe()}")
    print(f"{len(runs)} run(s) " + ("would be removed (--dry-run: nothing was changed)"
                                    if dry_run else "removed") + f": {where}")
    return 0


def cmd_info(store: str | None) -> int:
    with open_store(store) as st:  # an SQLite file passes quick_check as it is opened
        n = {t: st.q(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in (
            "documents", "fingerprints", "series", "measurements")}
        span = st.q("SELECT MIN(run_utc), MAX(run_utc) FROM documents").fetchone()
        hosts = [r[0] for r in st.q("SELECT DISTINCT host FROM documents ORDER BY host")]
        print(f"store: {shown(st.loc)} ({st.dialect}, schema version {st.version()}"
              + (", PRAGMA quick_check ok)" if st.dialect == "sqlite" else ")"))
        print(f"documents: {n['documents']}" + (f", {span[0]} .. {span[1]}" if span[0] else ""))
        print(f"hosts: {', '.join(hosts) or '-'}")
        print(f"fingerprints: {n['fingerprints']}, series: {n['series']}, "
              f"measurements: {n['measurements']}")
    return 0


def cmd_check(store: str | None) -> int:
    where = sqlite_file(location(store))
    if where is None:
        with open_store(store) as st:
            print(f"store {shown(st.loc)}: a PostgreSQL database keeps its own pages (data "
                  "checksums, the amcheck extension); kvb store check reads SQLite files")
        return 0
    if not os.path.isfile(where):
        raise UsageError(f"no store file at {where}")
    # Not through open_store: a store too damaged to open is the one whose problems to list.
    findings = store_file.check(where)
    if findings:  # bad input (exit 2): the problems are the error's lines, on stderr
        raise store_file.damaged(where, f"{len(findings)} problem(s), listed below",
                                 findings=findings)
    with open_store(store) as st:  # refuses an SQLite database that is not a store
        print(f"store {where}: PRAGMA integrity_check ok (schema version {st.version()})")
    return 0


def cmd_get(store: str | None, digest_prefix: str) -> int:
    with open_store(store) as st:
        digest, raw = st.document(digest_prefix)
    sys.stdout.buffer.write(raw)
    sys.stdout.flush()
    return 0


# The subcommands as commands/parsers/store.py names them, each from its arguments.

def add(args: argparse.Namespace) -> int:
    return cmd_add(args.store, args.files, args.attr)


def rm(args: argparse.Namespace) -> int:
    return cmd_rm(args.store, args.runs, args.dry_run)


def info(args: argparse.Namespace) -> int:
    return cmd_info(args.store)


def check(args: argparse.Namespace) -> int:
    return cmd_check(args.store)


def get(args: argparse.Namespace) -> int:
    return cmd_get(args.store, args.hash)
