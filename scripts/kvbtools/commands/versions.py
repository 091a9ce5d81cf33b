"""kvb versions, run: what the command does with its arguments. Its command line and
--help: commands/parsers/versions.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
from dataclasses import dataclass

from kvbtools.commands import series_report
from kvbtools.commands.arguments import PlanRequest
from kvbtools.core import manifest, output
from kvbtools.measure import callgrind, runner, sources
from kvbtools.core.presets import select_presets
from kvbtools.core.errors import UsageError
from kvbtools.measure.runner import Build


@dataclass(frozen=True)
class VersionsRequest:
    """kvb versions' arguments as values: the library, its trees, what to run, and the plan."""
    dep: str
    sources: tuple[str, ...]
    prefixes: tuple[str, ...]
    fetch: tuple[str, ...]
    preset: str | None
    bench: str | None
    micro: str | None             # None: not asked; "": kvbench_micro with the dep's filter
    plan: PlanRequest

    @staticmethod
    def of(args: argparse.Namespace) -> "VersionsRequest":
        return VersionsRequest(args.dep, tuple(args.source), tuple(args.prefix),
                               tuple(args.fetch), args.preset, args.bench, args.micro,
                               PlanRequest.of(args))


def run(req: VersionsRequest) -> int:
    output.check_outputs(  # exit 2 before any work
        [("--results-dir", req.plan.results_dir, ())],
        [*(("--source", d, ()) for d in req.sources), *(("--prefix", d, ()) for d in req.prefixes)])
    lib = manifest.check_buildable(req.dep)
    dep = lib.name
    preset = req.preset or callgrind.default_preset(req.plan.instructions)
    dirs: list[tuple[str, bool]] = [(d, False) for d in req.sources]
    dirs += [(d, True) for d in req.prefixes]
    dirs += [(sources.fetch(dep, v), False) for v in req.fetch]
    if not dirs:
        raise UsageError("give the versions with --source DIR..., --prefix DIR... or "
                         "--fetch VERSION...")
    presets, skipped = select_presets([preset])
    if skipped:
        raise UsageError(f"preset {preset} cannot be built here: {skipped[0][1]}")
    if req.bench and req.micro is not None:
        raise UsageError("--bench and --micro exclude each other")
    micro = req.micro is not None or (not req.bench and not lib.engine)
    wanted = dataclasses.replace(
        req.plan, engines=req.plan.engines if req.plan.engines is not None else
        dep if lib.engine else manifest.default_engine(),
        workloads=req.bench or req.plan.workloads)
    plan = series_report.make_plan(wanted, micro, req.micro or lib.micro_filter or "/4096$")
    found = [(d, is_prefix, sources.detect(dep, d, prefix=is_prefix)) for d, is_prefix in dirs]
    names = tree_names([d for d, _, v in found], [v for _, _, v in found])
    builds: list[Build] = []
    labels: list[str] = []
    for (d, is_prefix, version), name in zip(found, names):
        label = f"{dep} {version}" + (f" ({name})" if name else "")
        tag = f"{preset}-{dep}-{version}" + \
            (f"-{re.sub(r'[^A-Za-z0-9._+-]+', '_', name)}" if name else "")
        labels.append(label)
        k, v = (runner.root_define if is_prefix else runner.source_define)(dep, d)
        builds.append(Build(label, preset, tag, {k: v}))
    meta = {"command": "versions", "dep": dep, "preset": preset,
            "versions": labels, "repeats": wanted.repeats,
            "expect": {lab: [[dep, lab.split(" ")[1]]] for lab in labels}}
    meta["expect"]["control"] = meta["expect"][labels[0]]
    return series_report.run_series("versions", f"{preset}-{dep}-" + "-vs-".join(
        lab.split(" ", 1)[1].replace(" ", "") for lab in labels), builds, plan, wanted, meta)


def commit_name(d: str) -> str:
    """'efcfa3b v1.9.3-12-gefcfa3b' for the top of a git work tree ('efcfa3b' when describe
    finds no tag, '-dirty' when it has changes), else ''."""
    def git(*a: str) -> str:
        p = subprocess.run(["git", "-C", d, *a], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else ""
    top = git("rev-parse", "--show-toplevel")
    if not top or os.path.realpath(top) != os.path.realpath(d):
        return ""
    short = git("rev-parse", "--short", "HEAD")
    described = git("describe", "--tags", "--always", "--dirty")
    return short if described in ("", short) else f"{short} {described}"


def tree_names(dirs: list[str], versions: list[str]) -> list[str]:
    """What tells apart trees that declare the same version: the commit of a git tree, else the
    directory's name as given, else the whole path as given; '' for a version given once."""
    out = [""] * len(dirs)
    for version in set(versions):
        same = [i for i, v in enumerate(versions) if v == version]
        if len(same) < 2:
            continue
        real = [os.path.realpath(dirs[i]) for i in same]
        if len(set(real)) < len(real):
            raise UsageError(f"{' and '.join(dirs[i] for i in same)}: a tree given twice "
                             f"({version}); give each version once")
        names = [commit_name(dirs[i]) or os.path.basename(os.path.normpath(dirs[i]))
                 for i in same]
        if len(set(names)) < len(names):
            names = [commit_name(dirs[i]) or dirs[i] for i in same]
        if len(set(names)) < len(names):
            raise UsageError(f"{' and '.join(dirs[i] for i in same)} are the same commit "
                             f"({version}, {names[0]}): give each version once")
        for i, n in zip(same, names):
            out[i] = n
    return out


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(VersionsRequest.of(args))
