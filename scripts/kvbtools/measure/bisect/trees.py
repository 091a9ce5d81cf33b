"""kvb bisect's workspace: the worktrees, builds, relinks, runs, and what a build compiles.

One temporary directory, removed however the bisect ends. Kvbench mode builds in slots
(slots.py: slots/<preset>-<i>/, a worktree moved from commit to commit and one kvbench tree
configured once against it, so a step compiles what changed and links), copies each commit's
binaries (kvbench or kvbench_micro, one per layout seed, <name>-layout<N>) to bin/<preset>/<sha12>/
so commits share a round, and relinks a commit in the slot that built it. Generic mode builds in
trees/<sha12> (a detached worktree per commit: its measure command runs there), running the build
command once per seed and the measure command with its round's seed, KVB_LAYOUT_SEED=<seed> in
their environment (docs/placement.md has recipes); a relink adds the next seed. Every run is
pinned to `cpu` when there is one (--cpu_affinity=N; the generic measure command under taskset
-c N, KVB_CPU=N). Every build runs with CCACHE_BASEDIR on the workspace. The candidates of a
step build side by side while they fit the cores (build_many: each thread its own slot, or in
generic mode its own worktree, with cores/builds jobs, KVB_BUILD_JOBS in the build command's
environment); on a cluster the directory is in the shared results directory and every build
runs under the launcher (a Slurm build job, measure/fleet.py).

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
import threading
import time
from typing import Any, Callable, Iterator

from kvbtools.core.errors import UsageError
from kvbtools.core.output import progress
from kvbtools.measure import runner
from kvbtools.measure.bisect.slots import Slot
from kvbtools.measure.bisect.state import CompiledSet, GenericMode, KvbenchMode, Mode, \
    mode_from_json, mode_json
from kvbtools.measure.runner import BuildError
from kvbtools.measure.spent import SideBySide, Spent

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
    commits built and measured as `mode` says, `layouts` links each, build logs in `outdir`;
    `spend` receives what each build cost (the bisect's totals)."""

    def __init__(self, repo: str, outdir: str, mode: Mode, layouts: int,
                 spend: Callable[[Spent], None] | None = None, tmp: str = "") -> None:
        self.repo = repo
        self.outdir = outdir
        self.mode = mode
        self.layouts = layouts
        self.spend = spend or (lambda s: None)
        self.tmp = tmp or tempfile.mkdtemp(prefix="kvb-bisect.")
        self.trees: dict[str, str] = {}
        self.built: dict[str, str] = {}        # sha -> where to run it (tree or binary)
        self.binaries: dict[str, list[str]] = {}   # kvbench mode: sha -> binary per seed
        self.generic_links: dict[str, int] = {}    # generic mode: sha -> seeds built
        self.cpu: int | None = None                # every run pinned here (series.py)
        self.slots: dict[str, Slot] = {}           # kvbench mode: by name (slots.py)
        self.slot_of: dict[str, str] = {}          # sha -> the slot that built it
        self.portables: dict[str, str] = {}        # "<preset> <sha>" -> its binary
        self._lock = threading.Lock()
        self._first: dict[str, threading.Lock] = {}   # preset -> held by its first build
        self._primed: set[str] = set()                # presets built once in this workspace
        self._building = SideBySide()
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
                       tmp=d["tmp"])
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

    def build(self, sha: str, trace: bool = False, slot: int = 0,
              jobs: int = 0) -> tuple[set[str], set[str]]:
        """Builds the commit (once per invocation), in kvbench mode in slot `slot` with `jobs`
        jobs (0: runner.jobs()). Returns what the build read when `trace`. Raises BuildError
        when it does not build. Builds in different slots may run side by side (threads); the
        first build of the workspace makes the others wait for it (_in_slot). What it cost goes
        to `spend`: its wall time (once, however many builds ran beside it) and how many did."""
        log_trace = os.path.join(self.tmp, f"trace-{sha[:12]}.log")
        wrap = trace_wrap(log_trace) if trace else None
        if isinstance(self.mode, GenericMode):
            with self._building.piece() as wall:
                self._build_generic(sha, wrap)
            root = self.trees[sha]
        else:
            s = self.slot(self.mode.preset, slot, self.layouts)
            self.binaries[sha], wall = self._in_slot(s, sha, range(self.layouts), jobs,
                                                     self._wrap(wrap),
                                                     self._building)
            self.built[sha] = self.binaries[sha][0]
            self.slot_of[sha] = s.name
            root = s.src
        self.spend(Spent(builds=1, building=wall[0], build_width=self._building.width))
        return files_read(log_trace, root) if trace else (set(), set())

    def _wrap(self, wrap: list[str] | None) -> list[str] | None:
        """A build command's prefix: the launcher (a Slurm build job), then `wrap` (strace)."""
        return [*self.launcher, *(wrap or [])] or None

    def build_slots(self, wanted: int, room: int = 0) -> int:
        """How many of `wanted` builds run side by side: here one a core, or as many as `room`
        says fit where they run (a cluster's build partition: Fleet.build_slots); each in a
        slot of its own, or in generic mode its own worktree."""
        return max(1, min(wanted, room or cores()))

    def _env(self) -> dict[str, str]:
        """The environment of every build: paths under the workspace relative in ccache's
        hashes and ccache opening what it hashes (the trace). Kvbench mode's builds also leave
        the build directory out of the hashes (kvbench's objects carry -g; a slot's library and
        kvbench tree sit alike in every slot, so their compile lines read alike) and set the
        locale: ccache hashes LC_ALL and LC_MESSAGES, which CMake's compiler detection leaves
        set (to empty) in a first configure, so a library compiled there would miss ccache
        when a later build's ninja compiles it. (Generic mode's command keeps the user's.)"""
        env = dict(os.environ, CCACHE_BASEDIR=self.tmp, CCACHE_NOINODECACHE="1")
        if isinstance(self.mode, KvbenchMode):
            env |= {"CCACHE_NOHASHDIR": "1", "LC_ALL": "C", "LC_MESSAGES": "C"}
        return env

    def _build_generic(self, sha: str, wrap: list[str] | None) -> None:
        tree = self.tree(sha)
        mode = self.mode
        assert isinstance(mode, GenericMode)
        log = os.path.join(self.outdir, "build.log")
        for seed in range(self.layouts):  # traced once: every seed compiles the same files
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"\n==== {sha} (KVB_LAYOUT_SEED={seed}) ====\n")
            self._check(runner.run_logged, ["sh", "-c", mode.build_cmd], log, cwd=tree,
                        wrap=self._wrap(wrap if seed == 0 else None),
                        env=dict(self._env(), KVB_LAYOUT_SEED=str(seed)))
        self.built[sha] = tree
        self.generic_links[sha] = self.layouts

    def slot(self, preset: str, index: int, links: int) -> Slot:
        """The slot `index` of `preset`, `links` links a commit (made on first use)."""
        mode = self.mode
        assert isinstance(mode, KvbenchMode)
        name = f"{preset}-{index}"
        with self._lock:
            if name not in self.slots:
                log = os.path.join(self.outdir, "build.log" if name == f"{mode.preset}-0"
                                   else f"build.{name}.log")
                self.slots[name] = Slot(self.tmp, name, mode, preset, links, log)
        return self.slots[name]

    def _in_slot(self, s: Slot, sha: str, seeds: range, jobs: int,
                 wrap: list[str] | None = None, tally: SideBySide | None = None
                 ) -> tuple[list[str], list[float]]:
        """`sha` built in slot `s`: its binaries, copied out of the tree, and the wall seconds
        it added to `tally`. The first build of a preset in the workspace runs alone, on every
        CPU: builds beside it would compile the same files at the same time, and after it they
        find them in ccache."""
        with self._lock:
            first = self._first.setdefault(s.preset, threading.Lock())
        if s.preset not in self._primed:
            with first:
                if s.preset not in self._primed:
                    with tally.piece() if tally else contextlib.nullcontext([0.0]) as wall:
                        got = self._slot_build(s, sha, seeds, len(os.sched_getaffinity(0)),
                                               wrap)
                    self._primed.add(s.preset)
                    return got, wall
        with tally.piece() if tally else contextlib.nullcontext([0.0]) as wall:
            got = self._slot_build(s, sha, seeds, jobs or runner.jobs(), wrap)
        return got, wall

    def _slot_build(self, s: Slot, sha: str, seeds: range, jobs: int,
                    wrap: list[str] | None) -> list[str]:
        mode = self.mode
        assert isinstance(mode, KvbenchMode)
        if not os.path.isdir(s.src):   # the slot's worktree, at its first commit
            with worktrees_locked(self.repo):
                git(self.repo, "worktree", "add", "--detach", s.src, sha)
            s.head = sha
        with open(s.log, "a", encoding="utf-8") as f:
            f.write(f"\n==== {sha} (slot {s.name}, links {seeds.start}..{seeds.stop - 1}) "
                    "====\n")
        try:
            paths, rep = s.build(sha, seeds, jobs, self._env(), wrap)
        except BuildError as e:
            if re.search(r"failed \((-2|130)\)", str(e)):
                raise KeyboardInterrupt from None
            raise
        progress(f"{'built' if seeds.start == 0 else 'relinked'} {mode.dep} at {sha[:12]} "
                 f"(slot {s.name}): {rep.text(mode.dep, s.binary_name)}")
        dest = os.path.join(self.tmp, "bin", s.preset, sha[:12])
        os.makedirs(dest, exist_ok=True)
        return [shutil.copy2(p, dest) for p in paths]

    def portable(self, sha: str, preset: str, slot: int = 0, jobs: int = 0) -> str:
        """kvbench mode: the commit's binary built with `preset` (one link; the instruction
        counts') in that preset's slot `slot`, once per invocation. Raises BuildError."""
        key = f"{preset} {sha}"
        if key not in self.portables:
            self.portables[key] = self._in_slot(self.slot(preset, slot, 1), sha, range(1),
                                                jobs, self._wrap(None))[0][0]
        return self.portables[key]

    def primed(self, preset: str) -> bool:
        """Whether a build of `preset` was made in this workspace (the next ones find its
        objects in ccache)."""
        return preset in self._primed

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
        build command with KVB_LAYOUT_SEED=seed; kvbench mode links RELINK_BATCH seeds at once
        in the slot that built the commit (its checkout again, when the slot has moved on: the
        library's changed files from ccache). Raises BuildError."""
        mode = self.mode
        if isinstance(mode, GenericMode):
            log = os.path.join(self.outdir, "build.log")
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"\n==== {sha} (relink, layout seed {seed}) ====\n")
            self._check(runner.run_logged, ["sh", "-c", mode.build_cmd], log,
                        cwd=self.tree(sha), wrap=self._wrap(None),
                        env=dict(self._env(), KVB_LAYOUT_SEED=str(seed)))
            self.generic_links[sha] = seed + 1
            return
        s = self.slots[self.slot_of[sha]]
        self.binaries[sha] += self._in_slot(s, sha, range(seed, seed + RELINK_BATCH), 0,
                                            self._wrap(None))[0]

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
            for path in [*self.trees.values(), *(s.src for s in self.slots.values())]:
                git(self.repo, "worktree", "remove", "--force", path, check=False)
            shutil.rmtree(self.tmp, ignore_errors=True)
            git(self.repo, "worktree", "prune", check=False)


def build_many(ws: Workspace, shas: list[str], slots: int, cpus: int = 0
               ) -> tuple[dict[str, float], dict[str, BuildError]]:
    """Builds `shas` (each once per invocation: Workspace.build), `slots` threads at once,
    thread i building shas[i::slots] in slot i (generic mode: each commit in its worktree) with
    `cpus` jobs (a cluster's build job's CPUs), else cores // slots. Returns the seconds each
    took and, by commit, the BuildError of each that does not build (that commit's skip).
    Ctrl-C in any build stops them all."""
    if slots <= 1:
        return _one_by_one(shas, lambda sha: ws.build(sha))
    if isinstance(ws.mode, GenericMode):
        for sha in shas:
            ws.tree(sha)   # git's worktrees made one at a time, before the builds
    jobs = cpus or max(1, cores() // slots)
    took: dict[str, float] = {}
    failed: dict[str, BuildError] = {}
    with build_jobs(jobs), concurrent.futures.ThreadPoolExecutor(max_workers=slots) as pool:
        done = [pool.submit(_one_by_one, shas[i::slots], _builder(ws, i, jobs))
                for i in range(slots)]
    for f in done:
        t, e = f.result()
        took.update(t)
        failed.update(e)
    _gather_logs(ws, shas, failed)
    return took, failed


def _builder(ws: Workspace, i: int, jobs: int) -> Callable[[str], object]:
    """Thread i's build of a commit: in slot i; generic mode through a view of this
    workspace whose build.log is the commit's own, so that logs side by side do not
    interleave (_gather_logs joins them)."""
    if not isinstance(ws.mode, GenericMode):
        return lambda sha: ws.build(sha, slot=i, jobs=jobs)

    def one(sha: str) -> object:
        own = copy.copy(ws)
        own.outdir = os.path.join(ws.tmp, "logs", sha[:12])
        os.makedirs(own.outdir, exist_ok=True)
        return own.build(sha)
    return one


def _gather_logs(ws: Workspace, shas: list[str], failed: dict[str, BuildError]) -> None:
    """Generic mode: each side-by-side build's log added to build.log, in the order asked, and
    the failures made to name build.log."""
    main_log = os.path.join(ws.outdir, "build.log")
    for sha in shas:
        part = os.path.join(ws.tmp, "logs", sha[:12], "build.log")
        if os.path.exists(part):
            with open(part, encoding="utf-8", errors="replace") as src, \
                    open(main_log, "a", encoding="utf-8") as out:
                out.write(src.read())
            os.remove(part)
            if sha in failed:
                failed[sha] = BuildError(str(failed[sha]).replace(part, main_log))


def _one_by_one(shas: list[str], build: Callable[[str], object]
                ) -> tuple[dict[str, float], dict[str, BuildError]]:
    took: dict[str, float] = {}
    failed: dict[str, BuildError] = {}
    for sha in shas:
        t = time.monotonic()
        try:
            build(sha)
            took[sha] = time.monotonic() - t
        except BuildError as e:
            failed[sha] = e
    return took, failed
