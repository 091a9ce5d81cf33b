"""Slurm as kvb's fleet talks to it (docs/fleet.md): its configuration (--slurm PARTITION and the
sbatch options of --slurm-config FILE or $KVB_SLURM_CONFIG), a job submitted (sbatch
--parsable, always --no-requeue: a requeued job runs its whole script again, later, into the
same files, so kvb submits a lost job's work again itself), its state read (scontrol show job;
once slurmctld forgot it, sacct, then the job completion log of sacct -c), and the nodes up.

A job's exit status says nothing of a node that died: sbatch --wait and srun exit 0 then
(docs/evidence/slurm-cluster.md). A job succeeded when its JobState is COMPLETED; one that ended
NODE_FAIL, CANCELLED, TIMEOUT, PREEMPTED, BOOT_FAIL, DEADLINE or OUT_OF_MEMORY was lost, and
FAILED is the job's own failure (its exit code).
"""
from __future__ import annotations

import configparser
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from kvbtools.core.errors import RunError, UsageError

# Where the sbatch options come from when --slurm-config is not given.
CONFIG_ENV = "KVB_SLURM_CONFIG"
COMPLETED = "COMPLETED"
LOST = frozenset({"NODE_FAIL", "CANCELLED", "TIMEOUT", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                  "OUT_OF_MEMORY"})
ENDED = LOST | {COMPLETED, "FAILED"}
# sinfo's states of a node that takes jobs (idle, mixed, allocated, completing; not down,
# drained, failing or silent: a trailing * or ~).
UP = re.compile(r"^(idle|mix|mixed|alloc|allocated|comp|completing)$")


@dataclass(frozen=True)
class SlurmConfig:
    """Where kvb's jobs go and what sbatch is told (the [slurm] section of the config file)."""
    partition: str                          # --slurm: the measurement jobs' partition
    build_partition: str = ""               # build jobs ("": Slurm's default partition)
    options: tuple[str, ...] = ()           # every job: --account, --qos, --time, ...
    build_options: tuple[str, ...] = ()     # build jobs (e.g. --cpus-per-task=16)
    measure_options: tuple[str, ...] = ()   # measurement jobs
    arch: dict[str, tuple[str, ...]] = field(default_factory=dict)  # arch -> what picks it
    hosts: int = 0                          # measurement nodes of an architecture (0: all up)
    poll: float = 2.0                       # seconds between two looks at a job's state
    source: str = ""                        # the file read ("": none)

    def arch_options(self, arch: str) -> tuple[str, ...]:
        """The sbatch options that put a job on a node of `arch`: the file's `arch.ARCH`, else
        the node feature of that name (-C x86_64, -C aarch64)."""
        return self.arch.get(arch, (f"--constraint={arch}",))


KEYS = ("build_partition", "options", "build_options", "measure_options", "hosts",
        "poll_seconds")


def load_config(partition: str, path: str | None) -> SlurmConfig:
    """--slurm PARTITION with the [slurm] section of `path` (--slurm-config), else of
    $KVB_SLURM_CONFIG, else Slurm's defaults. A file that cannot be read or holds an unknown key
    is a UsageError."""
    if not partition or partition.startswith("-"):
        raise UsageError(f"--slurm: a partition name, got {partition!r}")
    path = path or os.environ.get(CONFIG_ENV) or None
    if path is None:
        return SlurmConfig(partition)
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#",))
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
    except (OSError, UnicodeDecodeError, configparser.Error) as e:
        raise UsageError(f"--slurm-config {path}: {e}") from None
    if not parser.has_section("slurm"):
        raise UsageError(f"--slurm-config {path}: no [slurm] section")
    s = parser["slurm"]
    unknown = [k for k in s if k not in KEYS and not k.startswith("arch.")]
    if unknown:
        raise UsageError(f"--slurm-config {path}: unknown key {', '.join(unknown)} (known: "
                         f"{', '.join(KEYS)}, arch.ARCH)")
    try:
        hosts, poll = s.getint("hosts", 0), s.getfloat("poll_seconds", 2.0)
        words = {k: tuple(shlex.split(s.get(k, ""))) for k in s
                 if k.endswith("options") or k.startswith("arch.")}
    except ValueError as e:
        raise UsageError(f"--slurm-config {path}: {e}") from None
    if hosts < 0 or poll <= 0:
        raise UsageError(f"--slurm-config {path}: hosts must be 0 or more and poll_seconds "
                         "more than 0")
    return SlurmConfig(partition, s.get("build_partition", ""), words.get("options", ()),
                  words.get("build_options", ()), words.get("measure_options", ()),
                  {k[5:]: v for k, v in words.items() if k.startswith("arch.")}, hosts, poll,
                  path)


def _slurm(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunError(f"{cmd[0]}: {e}") from None


def check_installed() -> None:
    """sbatch, scontrol, sinfo and sacct on PATH, and slurmctld answering; a UsageError saying
    which is missing (before any build)."""
    for tool in ("sbatch", "scontrol", "sinfo", "sacct", "scancel"):
        if not any(os.access(os.path.join(d, tool), os.X_OK)
                   for d in os.environ.get("PATH", "").split(os.pathsep) if d):
            raise UsageError(f"--slurm: {tool} is not on PATH (Slurm's client commands; "
                             "scripts/install-deps.sh --slurm installs them)")
    p = _slurm(["scontrol", "ping"])
    if p.returncode != 0 or "UP" not in p.stdout:
        raise UsageError(f"--slurm: slurmctld does not answer (scontrol ping: "
                         f"{(p.stdout + p.stderr).strip()[:300]})")


def submit(options: Iterable[str], command: Sequence[str], name: str, output: str,
           cwd: str) -> str:
    """Submits `command` as a batch job; its id. RunError when sbatch refuses it."""
    cmd = ["sbatch", "--parsable", "--no-requeue", f"--job-name={name}", f"--output={output}",
           f"--chdir={cwd}", *options, "--wrap", "exec " + shlex.join(command)]
    p = _slurm(cmd)
    job = p.stdout.strip().split(";")[0]
    if p.returncode != 0 or not job.isdigit():
        raise RunError(f"sbatch refused a job: {p.stderr.strip() or p.stdout.strip()} "
                       f"({shlex.join(cmd[:-2])})")
    return job


@dataclass(frozen=True)
class JobState:
    """How a job is or ended, as Slurm says it."""
    job: str
    state: str                 # PENDING, RUNNING, COMPLETED, NODE_FAIL, ... ("" unknown yet)
    node: str = ""             # where it runs or ran
    exit_code: int = 0         # its script's exit status (ExitCode N:S)
    reason: str = ""           # why it waits

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def lost(self) -> bool:
        return self.state in LOST

    def text(self) -> str:
        """'job 12 on node2: NODE_FAIL'."""
        return f"job {self.job} on {self.node or 'no node'}: {self.state}"


def _fields(line: str) -> dict[str, str]:
    return dict(re.findall(r"(\w[\w/:]*)=(\S*)", line))


def _exit(code: str) -> int:
    return int(code.split(":")[0]) if code.split(":")[0].isdigit() else 0


def state(job: str) -> JobState:
    """The job's state: scontrol while slurmctld knows it (MinJobAge), then sacct (a site's
    accounting database), then the job completion log (sacct -c)."""
    p = _slurm(["scontrol", "show", "job", "-o", job])
    if p.returncode == 0 and p.stdout.strip():
        f = _fields(p.stdout)
        node = f.get("NodeList", "")
        return JobState(job, f.get("JobState", ""), "" if node == "(null)" else node,
                        _exit(f.get("ExitCode", "0:0")), f.get("Reason", ""))
    for cmd in (["sacct", "-j", job, "-X"], ["sacct", "-c"]):
        p = _slurm([*cmd, "--parsable2", "--noheader", "--format=JobID,State,NodeList,ExitCode"])
        rows = [r.split("|") for r in p.stdout.splitlines() if r.split("|")[0] == job]
        if p.returncode == 0 and rows:
            _, st, node, code = (rows[-1] + ["", "", ""])[:4]
            return JobState(job, st.split()[0] if st else "", node, _exit(code))
    return JobState(job, "", reason="not known to scontrol or sacct yet")


def wait(jobs: Sequence[str], poll: float, say: Callable[[str], None]) -> dict[str, JobState]:
    """Each job's state once every one has ended; a line each time one starts or ends."""
    said: dict[str, str] = {}
    done: dict[str, JobState] = {}
    while len(done) < len(jobs):
        for job in jobs:
            if job in done:
                continue
            s = state(job)
            pending = s.state == "PENDING"
            seen = f"{s.state} {s.node} {s.reason if pending else ''}"
            if s.state and said.get(job) != seen and not (pending and s.reason in ("", "None")):
                say(s.text() if s.ended else f"job {job} pending ({s.reason})" if pending
                    else f"job {job} {s.state.lower()} on {s.node}")
            said[job] = seen
            if s.ended:
                done[job] = s
        if len(done) < len(jobs):
            time.sleep(poll)
    return done


def cancel(jobs: Iterable[str]) -> None:
    """scancel, whatever state they are in (a job that ended is not touched)."""
    ids = [j for j in jobs if j]
    if ids:
        _slurm(["scancel", *ids])


def option(words: Sequence[str], short: str, long: str) -> str | None:
    """The value of the last -X VALUE, -XVALUE, --long=VALUE or --long VALUE in `words`."""
    value = None
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w in (short, long):
            value = nxt
        elif w.startswith(long + "="):
            value = w[len(long) + 1:]
        elif w.startswith(short) and not w.startswith("--") and len(w) > len(short):
            value = w[len(short):]
    return value


def nodes(partition: str, options: Sequence[str]) -> list[str]:
    """The nodes up in `partition` (or the one `options` name) that have every feature
    `options` constrain a job to (-C A, --constraint=A&B), by name."""
    return sorted(up(partition, options))


def up(partition: str, options: Sequence[str]) -> dict[str, int]:
    """nodes(), each with its CPUs; partition "" (and none in `options`): Slurm's default
    partition."""
    partition = option(options, "-p", "--partition") or partition
    feats = set(re.split(r"[&,]", option(options, "-C", "--constraint") or "")) - {""}
    p = _slurm(["sinfo", "-h", "-N", *(["-p", partition] if partition else []),
                "-o", "%N|%t|%f|%c|%P"])
    if p.returncode != 0:
        raise RunError(f"sinfo -p {partition or '(the default)'}: {p.stderr.strip()}")
    out: dict[str, int] = {}
    for line in p.stdout.splitlines():
        name, st, have, cpus, part = (line.split("|") + ["", "", "", ""])[:5]
        if UP.match(st) and feats <= set(have.split(",")) and (partition or part.endswith("*")):
            out.setdefault(name, int(cpus) if cpus.isdigit() else 1)
    return out
