"""kvb bisect's builds of kvbench against the library at a commit (kvbench mode): slots.

A slot is a worktree of the library's repository (slots/<name>/src, moved from commit to commit
by `git checkout`) and one kvbench build tree configured against it (slots/<name>/build, with
-DKVBENCH_<DEP>_SOURCE_DIR=<the worktree> and KVBENCH_DEPS_LIVE: cmake/KvbenchSourceDeps.cmake).
The library is built inside the worktree and installed beside it, so every path kvbench compiles
and links with stays the same whatever commit the slot holds, and a commit's build is: the
checkout, the library's own incremental build (the files that differ from the commit the slot
held; ccache hits for those compiled before in any slot, CCACHE_BASEDIR being the workspace),
what includes a header that changed, and the links measured. No configure, unless the library's
version changed (the binary's audit names it), more layout seeds are wanted than the tree has
targets for, or the library cannot be kept live (WiredTiger 3.x's autotools build: configured
each time, as before). Only the binary measured is built: kvbench_micro for a micro benchmark,
kvbench for a KV workload, one link per layout seed (`<binary>-layout<N>`), or the default link
when a slot has one. The library's own target is built first, in a build of its own: ninja
looks at the headers when it starts, so a header the library's install changes is seen only by
the next build.

What a build did comes back as a Report: whether it configured and why, the files compiled on
each side and how many ccache had (CCACHE_STATSLOG), and the links.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass

from kvbtools.core.errors import UsageError
from kvbtools.measure import runner, sources
from kvbtools.measure.bisect.state import KvbenchMode
from kvbtools.measure.runner import Build, BuildError

SEEDS = 16    # layout seeds a tree gets link targets for at a time (more: a configure)
_HIT = ("direct_cache_hit", "preprocessed_cache_hit")


@dataclass
class Report:
    """What one build in a slot did."""
    configured: str = ""      # why it configured ("": it did not)
    dep_files: int = 0        # the library's files compiled (ccache hits included)
    dep_hits: int = 0
    own_files: int = 0        # kvbench's files compiled
    own_hits: int = 0
    links: int = 0
    seconds: float = 0.0
    ccache: bool = True       # compiled through ccache (else the counts are ninja's)

    def text(self, dep: str, binary: str) -> str:
        """'no configure; lz4: 3 file(s) compiled (3 from ccache), kvbench_micro: nothing
        compiled; 4 link(s); 5 s' (`binary`'s side: its own files and the kvbench libraries it
        links)."""
        def files(n: int, hits: int) -> str:
            if not n:
                return "nothing compiled"
            return f"{n} file(s) compiled" + (f" ({hits} from ccache)" if self.ccache else "")
        head = f"configured ({self.configured})" if self.configured else "no configure"
        return (f"{head}; {dep}: {files(self.dep_files, self.dep_hits)}, {binary}: "
                f"{files(self.own_files, self.own_hits)}; {self.links} link(s); "
                f"{self.seconds:.0f} s")


def _compiles(statslog: str) -> tuple[int, int]:
    """(files compiled, of them ccache hits) in a CCACHE_STATSLOG file; removes it."""
    n = hits = 0
    try:
        with open(statslog, encoding="utf-8", errors="replace") as f:
            for block in f.read().split("# ")[1:]:
                counters = set(block.split("\n")[1:])
                if counters & {*_HIT, "cache_miss"}:
                    n += 1
                    hits += bool(counters & set(_HIT))
        os.remove(statslog)
    except OSError:
        pass
    return n, hits


class Slot:
    """One worktree and one kvbench build tree (the module doc), built with `preset`, with
    `links` links a commit (1: the default link only). Builds in one slot run one at a time;
    builds in different slots may run side by side (threads)."""

    def __init__(self, tmp: str, name: str, mode: KvbenchMode, preset: str, links: int,
                 log: str) -> None:
        self.tmp, self.name, self.mode = tmp, name, mode
        self.preset, self.layouts, self.log = preset, links, log
        self.src = os.path.join(tmp, "slots", name, "src")
        self.dir = os.path.join(tmp, "slots", name, "build")
        self.head = ""          # the commit checked out ("" before the first build)
        self.version = ""       # the library's version the tree was configured with
        self.seeds = 0          # link targets the tree has (0: not configured)
        self.builds = 0

    @property
    def binary_name(self) -> str:
        return "kvbench_micro" if self.mode.plan.micro else "kvbench"

    def targets(self, seeds: range) -> list[str]:
        if self.layouts <= 1:
            return [self.binary_name]
        return [f"{self.binary_name}-layout{s}" for s in seeds]

    def _tree(self, seeds: int) -> Build:
        mode = self.mode
        defines = dict([runner.source_define(mode.dep, self.src),
                        ("KVBENCH_DEPS_LIVE", "ON"),
                        ("KVBENCH_DEPS_CACHE", os.path.join(self.tmp, "deps")),
                        ("KVBENCH_BUILD_MICRO", "ON" if mode.plan.micro else "OFF")])
        if shutil.which("ccache"):
            defines |= {"CMAKE_C_COMPILER_LAUNCHER": "ccache",
                        "CMAKE_CXX_COMPILER_LAUNCHER": "ccache"}
        # No debug information: -g took a third of the compile time of kvbench's files here
        # and changes no instruction (the library is built without it anyway); the flags the
        # binary records say so.
        defines |= {f"CMAKE_{lang}_FLAGS_RELWITHDEBINFO": "-O2 -DNDEBUG" for lang in ("C", "CXX")}
        return Build(f"{mode.dep} in slot {self.name}", self.preset, "", defines,
                     layouts=seeds if self.layouts > 1 else 1, where=self.dir)

    def checkout(self, sha: str) -> None:
        """The slot's worktree (made by the workspace) at `sha`. Raises BuildError."""
        if self.head != sha:
            runner.run_logged(["git", "-C", self.src, "checkout", "--quiet", "--force",
                               "--detach", sha], self.log)
        self.head = sha

    def why_configure(self, seeds: range) -> str:
        """Why this build must configure kvbench ('' when it need not)."""
        if not self.seeds:
            return "the slot's first build"
        if self.layouts > 1 and seeds.stop > self.seeds:
            return f"link targets for seeds up to {seeds.stop - 1}"
        if not self.live():
            return f"{self.mode.dep} is not kept up to date in its tree: its build configures"
        try:
            version = sources.detect(self.mode.dep, self.src)
        except UsageError:
            version = "?"
        if version != self.version:
            return f"{self.mode.dep} {self.version} -> {version}"
        return ""

    def build(self, sha: str, seeds: range, jobs: int, env: dict[str, str],
              wrap: list[str] | None = None) -> tuple[list[str], Report]:
        """Builds `sha`'s links `seeds` (the default link when the slot has one) with `jobs`
        jobs, with `env`, the library's configure and build under `wrap` (a tracer: what the
        build reads of the repository); returns their binaries (in the tree: copy them before
        the slot's next build) and what it did. Raises BuildError."""
        t0 = time.monotonic()
        try:
            self.checkout(sha)
            rep = self._make(seeds, jobs, env, wrap)
        except BuildError:
            self.failed()
            raise
        rep.seconds = time.monotonic() - t0
        paths = self._tree(max(self.seeds, 1)).binaries(self.mode.plan.micro)
        return ([paths[s] for s in seeds] if self.layouts > 1 else paths[:1]), rep

    def _make(self, seeds: range, jobs: int, env: dict[str, str],
              wrap: list[str] | None) -> Report:
        """Configures when it must, brings the library up to date, builds the targets."""
        rep = Report(configured=self.why_configure(seeds), ccache=bool(shutil.which("ccache")))
        stats = os.path.join(self.tmp, "slots", self.name, f"ccache-stats.{self.builds}")
        self.builds += 1
        env = dict(env, CCACHE_STATSLOG=stats + ".dep", CMAKE_BUILD_PARALLEL_LEVEL=str(jobs))
        if rep.configured:
            self._configure(seeds, jobs, env, wrap)
        if self.live():
            self._ninja([f"kvbench_dep_{self.mode.dep}"], jobs, env, wrap)
        start = os.path.getsize(self.log) if os.path.exists(self.log) else 0
        # Untraced: kvbench's own compiles read no file of the library's repository (its
        # headers are the installed copies), and strace would slow them.
        self._ninja(self.targets(seeds), jobs, dict(env, CCACHE_STATSLOG=stats + ".own"), None)
        rep.dep_files, rep.dep_hits = _compiles(stats + ".dep")
        rep.own_files, rep.own_hits = _compiles(stats + ".own")
        with open(self.log, encoding="utf-8", errors="replace") as f:
            f.seek(start)
            out = f.read()
        rep.links = len(re.findall(r"^\[\d+/\d+\] Linking \S+ executable", out, re.M))
        if not rep.ccache:
            rep.own_files = len(re.findall(r"^\[\d+/\d+\] Building \S+ object", out, re.M))
        return rep

    def live(self) -> bool:
        """Whether the library is kept up to date by the tree's builds (KVBENCH_DEPS_LIVE)."""
        return os.path.exists(os.path.join(self.src, ".kvbench-live", "kvbench-live.stamp"))

    def _configure(self, seeds: range, jobs: int, env: dict[str, str],
                   wrap: list[str] | None) -> None:
        want = -(-max(seeds.stop, self.seeds, SEEDS) // SEEDS) * SEEDS
        b = self._tree(want)
        b.defines["KVBENCH_DEPS_JOBS"] = str(jobs)
        os.makedirs(self.dir, exist_ok=True)
        runner.run_logged(b.configure_cmd(), self.log, cwd=runner.ROOT, wrap=wrap, env=env)
        self.seeds = want if self.layouts > 1 else 1
        try:
            self.version = sources.detect(self.mode.dep, self.src)
        except UsageError:
            self.version = "?"

    def _ninja(self, targets: list[str], jobs: int, env: dict[str, str],
               wrap: list[str] | None) -> None:
        runner.run_logged(["cmake", "--build", self.dir, "-j", str(jobs), "--target", *targets],
                          self.log, cwd=runner.ROOT, wrap=wrap, env=env)

    def failed(self) -> None:
        """After a build that failed: the next one configures again (a failed configure may
        leave the tree half made)."""
        self.seeds = 0
