"""kvb bisect's workspace: a worktree per commit, builds, relinks, runs, and what a build compiles.

One temporary directory, removed however the bisect ends: trees/<sha12> (a detached worktree per
commit built), bin/<sha12>/ (kvbench mode: the commit's kvbench or kvbench_micro, one per layout
seed, <name>-layout<N>, copied out of the one build directory so commits share a round), deps/
(kvbench mode: KVBENCH_DEPS_CACHE, so each commit's library is really compiled, cheaply with
ccache, and the trace sees what it reads). Generic mode runs the build command once per seed and
the measure command with its round's seed, KVB_LAYOUT_SEED=<seed> in their environment
(docs/placement.md has recipes); a relink adds the next seed. Every run is pinned to `cpu` when
there is one (--cpu_affinity=N; the generic measure command under taskset -c N, KVB_CPU=N).
The candidates of a step build side by side while they fit the cores (build_many: generic mode,
each in its own worktree, KVB_BUILD_JOBS=cores/builds in the build command's environment, each
build's log added to build.log when it ends); kvbench mode builds one at a time, since every
commit builds in the one build directory of its preset and dependency.

What the build compiles: the builds of old and new run under strace; the repository's files
they open (git's own reads excluded), plus every source file in a directory the build listed (a
CMake glob picks up a file added later), are the compiled set (state.CompiledSet); a commit's
fingerprint hashes those paths' blob ids in its tree (git ls-tree: no checkout, no build).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import dataclasses
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any, Iterator

from kvbtools.measure import runner
from kvbtools.core.errors import UsageError
from kvbtools.measure.bisect.state import CompiledSet, GenericMode, Mode, mode_from_json, \
    mode_json
from kvbtools.measure.runner import Build, BuildError

TRACE_CALLS = "trace=/^(open|openat|openat2|execve|execveat)$"
RELINK_BATCH = 4    # kvbench mode: links added to a commit at once (Workspace.relink)


def git(repo: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(["git", "-C", repo, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: {p.stderr.strip()}")
    return p


@contextlib.contextmanager
def worktrees_locked(repo: str) -> Iterator[None]:
    """Holds the repository's lock on its worktrees. Two kvb bisects of one repository add and
    prune worktrees side by side, and git's own bookkeeping of them (.git/worktrees) is not safe
    against that: one reads the other's half-made entry and fails ("failed to read
    .git/worktrees/X/commondir")."""
    common = git(repo, "rev-parse", "--git-common-dir").stdout.strip()
    with open(os.path.join(repo, common, "kvb-worktrees.lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def interrupted(returncode: int) -> bool:
    """A child killed by the Ctrl-C that reached the whole process group (or a shell reporting
    one): the bisect stops instead of blaming the commit."""
    return returncode in (-signal.SIGINT, 128 + signal.SIGINT)


def tracer() -> str:
    """'' when strace can trace here, else why not."""
    if shutil.which("strace") is None:
        return "strace is not installed (apt-get install strace)"
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=none", "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return "" if p.returncode == 0 else f"strace cannot trace here: {p.stderr.strip()[:200]}"


def trace_wrap(path: str) -> list[str]:
    """strace for every command of one build (-A: they append to one file)."""
    return ["strace", "-f", "-qq", "-y", "-e", TRACE_CALLS, "-e", "status=successful", "-A",
            "-o", path]


_EXEC = re.compile(r'^(\d+)\s+execve(?:at)?\((?:\S+, )?"([^"]*)"')
_EXEC_DONE = re.compile(r"^(\d+)\s+(?:execve|<\.\.\. execve(?:at)? resumed>).* = 0$")
_OPEN = re.compile(r"^(\d+)\s+(?:open(?:at2?)?\(|<\.\.\. open(?:at2?)? resumed>).* = \d+<(.+)>$")


def files_read(trace: str, root: str) -> tuple[set[str], set[str]]:
    """Paths under `root` (relative) that the traced processes opened, files and directories
    apart; opens by git itself (a `git status` in the build re-reads racily clean files) are
    left out."""
    top = os.path.realpath(root) + os.sep
    exe: dict[str, str] = {}
    pending: dict[str, str] = {}
    files: set[str] = set()
    dirs: set[str] = set()
    with open(trace, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = _EXEC.match(line)
            if m:
                pending[m.group(1)] = os.path.basename(m.group(2))
            m = _EXEC_DONE.match(line)
            if m and m.group(1) in pending:
                exe[m.group(1)] = pending.pop(m.group(1))
                continue
            m = _OPEN.match(line)
            if not m or exe.get(m.group(1), "").startswith("git"):
                continue
            path = m.group(2)
            if not path.startswith(top):
                continue
            rel = path[len(top):]
            (dirs if os.path.isdir(path) else files).add(rel)
    return files, dirs


def tracked(repo: str, sha: str) -> list[tuple[str, str]]:
    """(path, blob id) of every file in the commit's tree."""
    out = git(repo, "ls-tree", "-r", "-z", sha).stdout
    entries = []
    for item in out.split("\0"):
        if "\t" in item:
            meta, path = item.split("\t", 1)
            entries.append((path, meta.split()[2]))
    return entries


def fingerprint(repo: str, sha: str, cset: CompiledSet) -> str:
    """Hash of the compiled set's paths and blob ids in the commit's tree."""
    h = hashlib.sha256()
    for path, blob in tracked(repo, sha):
        if cset.covers(path):
            h.update(f"{path}\0{blob}\n".encode())
    return h.hexdigest()[:16]


def learn(repo: str, shas: list[str], reads: list[tuple[set[str], set[str]]],
          measure_cmd: str = "") -> CompiledSet:
    """The compiled set from the traced builds of `shas` (their reads), plus files the measure
    command names (a script in the repository that it runs)."""
    cset = CompiledSet()
    named = {w[2:] if w.startswith("./") else w for w in shlex.split(measure_cmd or "")}
    for sha, (files, dirs) in zip(shas, reads):
        paths = {p for p, _ in tracked(repo, sha)}
        cset.files |= (files | named) & paths
        cset.dirs |= dirs
    return cset


def cores() -> int:
    """The CPUs this process may run on: what builds side by side can use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def build_jobs(n: int) -> Iterator[None]:
    """KVB_BUILD_JOBS=n in the environment of the builds started meanwhile (`make
    -j$KVB_BUILD_JOBS`); set by the one thread that starts them, before it starts them."""
    before = os.environ.get("KVB_BUILD_JOBS")
    os.environ["KVB_BUILD_JOBS"] = str(n)
    try:
        yield
    finally:
        if before is None:
            del os.environ["KVB_BUILD_JOBS"]
        else:
            os.environ["KVB_BUILD_JOBS"] = before


def command(cmd: str) -> list[str]:
    """A shell command as an argv: run directly when it is plain words (one process less per
    run), else through sh -c."""
    if re.search(r"[^\w@%+=:,./ -]", cmd):
        return ["sh", "-c", cmd]
    return shlex.split(cmd)


class Workspace:
    """The temporary directory of one kvb bisect invocation (see the module doc): `repo`'s
    commits built and measured as `mode` says, `layouts` links each, build.log in `outdir`."""

    def __init__(self, repo: str, outdir: str, mode: Mode, layouts: int, tmp: str = "") -> None:
        self.repo = repo
        self.outdir = outdir
        self.mode = mode
        self.layouts = layouts
        self.tmp = tmp or tempfile.mkdtemp(prefix="kvb-bisect.")
        self.trees: dict[str, str] = {}
        self.built: dict[str, str] = {}        # sha -> where to run it (tree or binary)
        self.binaries: dict[str, list[str]] = {}   # kvbench mode: sha -> binary per seed
        self.generic_links: dict[str, int] = {}    # generic mode: sha -> seeds built
        self.cpu: int | None = None                # every run pinned here (series.py)
        self.launcher: list[str] = []              # the builds' prefix: a Slurm build job

    def to_json(self) -> dict[str, Any]:
        """What a run of a built commit needs where it runs (a Slurm job: measure/fleet.py),
        from_json's input: the directory, the modes and where each commit's builds are."""
        return {"repo": self.repo, "outdir": self.outdir, "mode": mode_json(self.mode),
                "layouts": self.layouts, "tmp": self.tmp, "trees": self.trees,
                "built": self.built, "binaries": self.binaries,
                "generic_links": self.generic_links}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Workspace":
        ws = Workspace(d["repo"], d["outdir"], mode_from_json(d["mode"]), int(d["layouts"]),
                       d["tmp"])
        ws.trees, ws.built, ws.binaries = dict(d["trees"]), dict(d["built"]), \
            {k: list(v) for k, v in d["binaries"].items()}
        ws.generic_links = {k: int(v) for k, v in d["generic_links"].items()}
        return ws

    def tree(self, sha: str) -> str:
        if sha not in self.trees:
            path = os.path.join(self.tmp, "trees", sha[:12])
            with worktrees_locked(self.repo):
                git(self.repo, "worktree", "add", "--detach", path, sha)
            self.trees[sha] = path
        return self.trees[sha]

    def build(self, sha: str, trace: bool = False) -> tuple[set[str], set[str]]:
        """Builds the commit (once per invocation). Returns what the build read when `trace`.
        Raises BuildError when it does not build."""
        tree = self.tree(sha)
        wrap: list[str] | None = None
        log_trace = os.path.join(self.tmp, f"trace-{sha[:12]}.log")
        if trace:
            wrap = trace_wrap(log_trace)
        env = dict(os.environ, CCACHE_NOINODECACHE="1")  # ccache must open what it hashes
        # Paths under the workspace relative in ccache's hashes: with the library built inside
        # its worktree (KVBENCH_DEPS_BUILD_IN_TREE), every commit's compile lines read alike and
        # a step recompiles only the files that differ (docs/presets.md).
        env["CCACHE_BASEDIR"] = self.tmp
        log = os.path.join(self.outdir, "build.log")
        mode = self.mode
        if isinstance(mode, GenericMode):
            for seed in range(self.layouts):  # traced once: every seed compiles the same files
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"\n==== {sha} (KVB_LAYOUT_SEED={seed}) ====\n")
                self._check(runner.run_logged, ["sh", "-c", mode.build_cmd], log, cwd=tree,
                            wrap=self._wrap(wrap if seed == 0 else None),
                            env=dict(env, KVB_LAYOUT_SEED=str(seed)))
            self.built[sha] = tree
            self.generic_links[sha] = self.layouts
        else:
            b = self._build_of(sha, self.layouts, ("KVBENCH_DEPS_BUILD_IN_TREE", "ON"))
            self._check(runner.do_build, b, mode.plan.micro, "", wrap=self._wrap(wrap), env=env)
            dest = os.path.join(self.tmp, "bin", sha[:12])
            os.makedirs(dest, exist_ok=True)
            self.binaries[sha] = [shutil.copy2(p, dest) for p in b.binaries(mode.plan.micro)]
            self.built[sha] = self.binaries[sha][0]
        return files_read(log_trace, tree) if trace else (set(), set())

    def _wrap(self, wrap: list[str] | None) -> list[str] | None:
        """A build command's prefix: the launcher (a Slurm build job), then `wrap` (strace)."""
        return [*self.launcher, *(wrap or [])] or None

    def build_slots(self, wanted: int, room: int = 0) -> int:
        """How many of `wanted` builds run side by side: generic mode one a core here, or as
        many as `room` says fit where they run (a cluster's build partition: Fleet.build_slots),
        each commit building in its worktree; kvbench mode one (the module doc)."""
        return max(1, min(wanted, room or cores())) if isinstance(self.mode, GenericMode) \
            else 1

    def build_many(self, shas: list[str], slots: int, cpus: int = 0
                   ) -> tuple[dict[str, float], dict[str, BuildError]]:
        """Builds `shas` (each once per invocation: `build`), up to `slots` at once, each in a
        thread of its own whose build command runs as a subprocess with `cpus` jobs, else
        cores // slots (KVB_BUILD_JOBS). Returns the seconds each took and, by commit, the
        BuildError of each that does not build (that commit's skip). Ctrl-C in any build stops
        them all."""
        if slots <= 1:
            return self._one_by_one(shas)
        for sha in shas:
            self.tree(sha)   # git's worktrees made one at a time, before the builds
        logs = os.path.join(self.tmp, "logs")

        def one(sha: str) -> float:
            # A view of this workspace whose build.log is the commit's own, so the logs of
            # builds side by side do not interleave; what it builds is this workspace's.
            own = copy.copy(self)
            own.outdir = os.path.join(logs, sha[:12])
            os.makedirs(own.outdir, exist_ok=True)
            t = time.monotonic()
            own.build(sha)
            return time.monotonic() - t

        took: dict[str, float] = {}
        failed: dict[str, BuildError] = {}
        with build_jobs(cpus or max(1, cores() // slots)), \
                concurrent.futures.ThreadPoolExecutor(max_workers=slots) as pool:
            done = {sha: pool.submit(one, sha) for sha in shas}
        main_log = os.path.join(self.outdir, "build.log")
        for sha, f in done.items():   # each build's log, in the order asked
            part = os.path.join(logs, sha[:12], "build.log")
            if os.path.exists(part):
                with open(part, encoding="utf-8", errors="replace") as src, \
                        open(main_log, "a", encoding="utf-8") as out:
                    out.write(src.read())
            e = f.exception()
            if isinstance(e, BuildError):
                failed[sha] = BuildError(str(e).replace(part, main_log))
            elif e is not None:
                raise e
            else:
                took[sha] = f.result()
        return took, failed

    def _one_by_one(self, shas: list[str]) -> tuple[dict[str, float], dict[str, BuildError]]:
        took: dict[str, float] = {}
        failed: dict[str, BuildError] = {}
        for sha in shas:
            t = time.monotonic()
            try:
                self.build(sha)
                took[sha] = time.monotonic() - t
            except BuildError as e:
                failed[sha] = e
        return took, failed

    def _build_of(self, sha: str, layouts: int, *more: tuple[str, str]) -> Build:
        """kvbench mode: the shared build directory, pointed at the commit's worktree."""
        mode = self.mode
        assert not isinstance(mode, GenericMode)
        return Build(f"{mode.dep} at {sha[:12]}", mode.preset, f"bisect-{mode.preset}-{mode.dep}",
                     dict([runner.source_define(mode.dep, self.tree(sha)),
                           ("KVBENCH_DEPS_CACHE", os.path.join(self.tmp, "deps")), *more]),
                     layouts=layouts)

    def canary_binary(self) -> str:
        """The binary the bisect's canary runs: the first built commit's kvbench or
        kvbench_micro (kvbench mode: the binary it measures; both have --canary); '' before a
        build and in generic mode (the measure command is the user's)."""
        return next((b[0] for b in self.binaries.values() if b), "")

    @staticmethod
    def _check(fn: Any, *args: Any, **kw: Any) -> None:
        """fn(*args, **kw); a child killed by Ctrl-C (exit -2 or 130) is the bisect's
        interruption, not the commit's failure."""
        try:
            fn(*args, **kw)
        except BuildError as e:
            if re.search(r"failed \((-2|130)\)", str(e)):
                raise KeyboardInterrupt from None
            raise

    def links(self, sha: str) -> int:
        """The links (seeds 0..n-1) of a built commit."""
        if isinstance(self.mode, GenericMode):
            return self.generic_links.get(sha, 0)
        return len(self.binaries.get(sha, []))

    def relink(self, sha: str, seed: int) -> None:
        """Adds link `seed` to a built commit whose links are 0..seed-1: generic mode runs the
        build command with KVB_LAYOUT_SEED=seed; kvbench mode relinks <target>-layout<N> from
        the commit's objects (its library from the deps cache) for RELINK_BATCH seeds at once,
        since repointing the shared build directory at the commit (a CMake configure, tens of
        seconds under load) costs more than a link. Raises BuildError."""
        mode, tree = self.mode, self.tree(sha)
        log = os.path.join(self.outdir, "build.log")
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"\n==== {sha} (relink, layout seed {seed}) ====\n")
        if isinstance(mode, GenericMode):
            self._check(runner.run_logged, ["sh", "-c", mode.build_cmd], log, cwd=tree,
                        wrap=self._wrap(None), env=dict(os.environ, KVB_LAYOUT_SEED=str(seed)))
            self.generic_links[sha] = seed + 1
            return
        micro = mode.plan.micro
        seeds = list(range(seed, seed + RELINK_BATCH))
        b = self._build_of(sha, seeds[-1] + 1)
        name = "kvbench_micro" if micro else "kvbench"
        blog = os.path.join(b.dir, "kvb-build.log")
        self._check(runner.run_logged, b.configure_cmd(), blog, cwd=runner.ROOT,
                    wrap=self._wrap(None))
        self._check(runner.run_logged, ["cmake", "--build", b.dir, "-j", str(runner.jobs()),
                                        "--target", *(f"{name}-layout{x}" for x in seeds)],
                    blog, cwd=runner.ROOT, wrap=self._wrap(None))
        dest = os.path.join(self.tmp, "bin", sha[:12])
        self.binaries[sha] += [shutil.copy2(b.binaries(micro)[x], dest) for x in seeds]

    def run(self, sha: str, out: str, seed: int = 0) -> None:
        """One measurement of a built commit's link `seed`, its JSON written to `out`, pinned to
        `cpu` when there is one. Raises BuildError when it fails."""
        mode = self.mode
        cpu = self.cpu
        if isinstance(mode, GenericMode):
            pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
            env = dict(os.environ, KVB_LAYOUT_SEED=str(seed))
            if cpu is not None:
                env["KVB_CPU"] = str(cpu)
            with open(out, "w", encoding="utf-8") as f:
                p = subprocess.run(pin + command(mode.measure_cmd), cwd=self.built[sha],
                                   stdout=f, stderr=subprocess.PIPE, text=True, env=env)
            if interrupted(p.returncode):
                raise KeyboardInterrupt
            if p.returncode != 0:
                raise BuildError(f"the measure command failed ({p.returncode}): "
                                 f"{p.stderr.strip()[-500:]}")
        else:
            plan = mode.plan if cpu is None else dataclasses.replace(
                mode.plan, extra=[*mode.plan.extra, f"--cpu_affinity={cpu}"])
            binary = self.binaries.get(sha, [self.built[sha]])
            self._check(runner.run_once, binary[seed % len(binary)], plan, out, mode.engine)

    def cleanup(self) -> None:
        """Removes the worktrees and the directory; then prunes, which also forgets a worktree
        whose `git worktree add` was interrupted before it was listed here."""
        with worktrees_locked(self.repo):
            for path in self.trees.values():
                git(self.repo, "worktree", "remove", "--force", path, check=False)
            shutil.rmtree(self.tmp, ignore_errors=True)
            git(self.repo, "worktree", "prune", check=False)
