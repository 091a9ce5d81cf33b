"""kvb's Slurm executor (docs/fleet.md): builds and measurements as jobs on a Slurm cluster.

Builds. runner.do_build and runner.relink (and a bisect's build command) run under
`kvb worker exec` (Fleet.build_wrap), which submits the command as a job on a node of the build
partition with the build's architecture, follows the job's state, copies its output into the
build log and exits with its status; a job lost with its node is submitted again (exec_job).

Measurements. SlurmExecutor runs each part of a Block (measure/plan.py) as a job that has a node
of the measurement partition to itself (--exclusive), on the plan's architecture; a step of the
loop gives every node of that architecture a part: its rounds of every build. There
`kvb worker block SPEC` (run_block) reads the plan (Plan.from_json), the part's rounds and the
Runner's inputs, chooses the CPU and the canary on that node as kvb does here (the Runner's
`pin`), runs the rounds with a LocalExecutor, marks every run's document with the node and its
CPU (context.slurm, mark_node) and rewrites RESULT after every round. The driver waits until
every job has ended (slurm.wait), then reads each result: a COMPLETED job's rounds join the loop
with their node as the host; every round of a lost job (NODE_FAIL, CANCELLED, TIMEOUT, ...) is
set apart, "lost: job J on NODE: STATE", its runs kept on record but out of every verdict, and
the loop runs its seeds again on whichever node Slurm gives; an error the Runner raised there
is raised here, as it would have been had it run here. An interrupted driver cancels its jobs.
All of it goes through files on storage every node shares at the same path (the checkout, the
results directory): the spec, the runs and the result.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from kvbtools.core import host, output, presets, results
from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.output import progress
from kvbtools.measure import pinning, runner, slurm
from kvbtools.measure.executor import BlockResult, LocalExecutor, Runner
from kvbtools.measure.plan import Block, Measurement, Plan

# Times a build job lost with its node is submitted again before the build fails.
RESUBMITS = 2


class Portable(Runner, Protocol):
    """A Runner that can run on another host: its inputs as JSON (to_json; commands/worker.py
    makes it again from them, by `kind`), how it pins its runs where it runs (pin), and the
    errors it raises, which the driver raises again (errors)."""
    kind: str
    errors: tuple[type[Exception], ...]

    def to_json(self) -> dict[str, Any]:
        ...

    def pin(self, plan: Plan, cpu: str) -> pinning.Pin:
        """The CPU(s) and the canary of the runs, chosen where they run (--cpu `cpu`)."""
        ...


def arch(preset: str) -> str:
    """The architecture a build of `preset` is for (KVBENCH_TARGET_ARCH), else this host's
    (a preset without one; a bisect's build command)."""
    got = presets.load_presets().get(preset)
    return (got.arch if got else "") or host.host_arch()


@dataclass
class Fleet:
    """The cluster kvb's jobs go to (slurm.SlurmConfig), the jobs submitted, and what each
    measurement node chose: its pin and its canary's readings so far (the jobs of one command
    share them, as its rounds share one pin and one canary when they run here)."""
    config: slurm.SlurmConfig
    jobs: list[str] = field(default_factory=list)     # every job submitted, in order
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # node -> pin, readings

    def pin_text(self) -> str:
        """How each node pinned its runs, as the CPU line says it."""
        return "chosen on each node: " + "; ".join(
            f"{n}: {(x.get('pin') or {}).get('how', '')}" for n, x in sorted(self.nodes.items()))

    def build_wrap(self, arch: str, where: str, name: str) -> list[str]:
        """The command prefix that runs a build command as a job (kvb worker exec); its job
        output is kept in `where` until copied to the log."""
        return [sys.executable, host.KVB, "worker", "exec", "--dir", where, "--name",
                f"build-{name}", "--poll", f"{self.config.poll:g}", "--sbatch",
                shlex.join(self.build_options(arch)), "--"]

    def build_options(self, arch: str) -> list[str]:
        """A build job's sbatch options: the build partition (else Slurm's default), the
        CPUs of a build, the architecture's node."""
        c = self.config
        return [*([f"--partition={c.build_partition}"] if c.build_partition else []),
                f"--cpus-per-task={runner.jobs()}", *c.options, *c.arch_options(arch),
                *c.build_options]

    def measure_options(self, arch: str) -> list[str]:
        c = self.config
        return [f"--partition={c.partition}", "--exclusive", *c.options, *c.arch_options(arch),
                *c.measure_options]

    def build_slots(self, arch: str) -> tuple[int, int]:
        """(builds that run side by side on the build partition's nodes of `arch` that are up,
        the CPUs of each): each node's CPUs over a build job's (--cpus-per-task), 1 at least."""
        opts = self.build_options(arch)
        asked = slurm.option(opts, "-c", "--cpus-per-task") or ""
        cpus = int(asked) if asked.isdigit() and int(asked) > 0 else 1
        room = sum(c // cpus for c in slurm.up(self.config.build_partition, opts).values())
        return max(1, room), cpus

    def hosts(self, arch: str) -> list[str]:
        """The measurement nodes of `arch` that are up (at most the config's `hosts`); a
        RunError when there is none."""
        got = slurm.nodes(self.config.partition, self.measure_options(arch))
        if not got:
            raise RunError(f"no node of partition {self.config.partition} is up for {arch} "
                           f"({shlex.join(self.config.arch_options(arch))}): sinfo -p "
                           f"{self.config.partition} says why")
        return got[:self.config.hosts] if self.config.hosts else got


@dataclass
class Job:
    """One part of a block, submitted."""
    job: str
    rounds: tuple[tuple[int, int], ...]
    result: str
    output: str


class SlurmExecutor:
    """The engine's Executor on the fleet (the module doc): a part of every Block a node."""
    batched = True

    def __init__(self, fleet: Fleet, runner: Portable, cpu: str, arch: str,
                 jobs_dir: str) -> None:
        self.fleet, self.runner, self.cpu, self.arch, self.dir = fleet, runner, cpu, arch, \
            jobs_dir
        self.nodes = fleet.hosts(arch)
        self.hosts = len(self.nodes)
        output.make_dirs(jobs_dir)

    def run(self, plan: Plan, block: Block) -> BlockResult:
        t0 = time.monotonic()
        jobs: list[Job] = []
        try:
            for sub, part in block.plans(plan):
                jobs.append(self.submit(sub, part, bool(block.groups)))
            states = slurm.wait([j.job for j in jobs], self.fleet.config.poll, progress)
        except BaseException:
            slurm.cancel(j.job for j in jobs)
            raise
        out = BlockResult(wall=time.monotonic() - t0)
        for j in jobs:
            self.collect(out, j, states[j.job])
        try:   # the next step goes to the nodes up now
            self.nodes = self.fleet.hosts(self.arch)
        except RunError:   # none: its jobs wait for one
            pass
        self.hosts = len(self.nodes)
        return out

    def submit(self, plan: Plan, rounds: tuple[tuple[int, int], ...], named: bool = False
               ) -> Job:
        """A job of the plan's `rounds` (`named`: its progress line names the variants, a
        group's of a plan in groups)."""
        stem = os.path.join(self.dir, f"{re.sub(r'[^A-Za-z0-9._+-]+', '', plan.name) or 'plan'}"
                                      f".r{rounds[0][0]}-{rounds[-1][0]}")
        spec = {"plan": plan.to_json(), "rounds": [list(x) for x in rounds],
                "kind": self.runner.kind, "runner": self.runner.to_json(), "cpu": self.cpu,
                "nodes": self.fleet.nodes, "result": stem + ".result.json"}
        results.write_json(stem + ".json", spec)
        # In kvb's working directory, where the plan's relative paths (--results-dir) start.
        job = slurm.submit(self.fleet.measure_options(self.arch),
                           [sys.executable, host.KVB, "worker", "block", stem + ".json"],
                           "kvb-measure", stem + ".out", os.getcwd())
        self.fleet.jobs.append(job)
        what = f" of {', '.join(v.label for v in plan.variants)}" if named else ""
        progress(f"job {job}: rounds {rounds[0][0]}-{rounds[-1][0]}{what} on a {self.arch} node "
                 f"of {self.fleet.config.partition} to itself")
        return Job(job, rounds, stem + ".result.json", stem + ".out")

    def collect(self, out: BlockResult, job: Job, st: slurm.JobState) -> None:
        """The job's rounds into `out` (the module doc)."""
        got = _read(job.result)
        if got.get("error"):
            err = got["error"]
            kind = next((e for e in self.runner.errors if e.__name__ == err.get("type")),
                        RunError)
            raise kind(f"{err.get('message')} ({st.text()})")
        done = {int(x["round"]): x for x in got.get("rounds", [])}
        out.measurements += [_measurement(m) for x in done.values() for m in x["measurements"]]
        if st.state == slurm.COMPLETED and got.get("done"):
            for r, x in done.items():
                if x.get("set_apart"):
                    out.set_apart[r] = x["set_apart"]
                out.seconds[r] = float(x.get("seconds", 0.0))
                out.canary += float(x.get("canary", 0.0))
            self.fleet.nodes[got["node"]] = {"pin": got.get("pin"),
                                             "canary_readings": got.get("canary_readings", {}),
                                             "cpu_model": got.get("cpu_model", "")}
        elif st.lost or st.state == slurm.COMPLETED:
            for r, _ in job.rounds:
                out.set_apart[r] = (f"round {r}: lost: {st.text()} (its {len(job.rounds)} "
                                    "rounds set apart, to be run again)")
                out.lost.add(r)
        else:
            raise RunError(f"{st.text()}, exit {st.exit_code}, without a result: its output "
                           f"{output.shown(job.output)}:\n{_tail(job.output)}")



def _read(path: str) -> dict[str, Any]:
    try:
        got = results.read_json(path)
    except UsageError:   # a job that died before writing it: no result
        return {}
    return got if isinstance(got, dict) else {}


def _tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:]).rstrip()
    except OSError:
        return "(no output)"


def _measurement(d: dict[str, Any]) -> Measurement:
    return Measurement(**dict(d, cpus=tuple(d.get("cpus", ()))))


# ---- where the job runs: kvb worker block, kvb worker exec ---------------------------------------

def run_block(spec: dict[str, Any], made: Portable) -> int:
    """kvb worker block: the spec's rounds run here by the Runner `made` of its inputs (the
    module doc); 0 done, 1 when the Runner failed (the error is in the result)."""
    plan = Plan.from_json(spec["plan"])
    where = {"node": os.environ.get("SLURMD_NODENAME") or os.uname().nodename,
             "job": os.environ.get("SLURM_JOB_ID", ""),
             "partition": os.environ.get("SLURM_JOB_PARTITION", ""),
             "cluster": os.environ.get("SLURM_CLUSTER_NAME", ""), "cpu_model": host.cpu_model()}
    doc: dict[str, Any] = dict(where, rounds=[], done=False)
    try:
        watch = node_watch(made, plan, spec["cpu"], spec.get("nodes", {}).get(where["node"]))
        doc["pin"] = watch.pin.to_json()
        local = LocalExecutor(made, watch)
        plan = dataclasses.replace(plan, pin=watch.pin)
        for r, seed in spec["rounds"]:
            got = local.run(plan, Block(((r, seed),)))
            runs = [dataclasses.replace(m, host=where["node"]) for m in got.measurements]
            for m in runs:
                mark_node(m.path, dict(where, cpus=",".join(map(str, m.cpus))))
            doc["rounds"].append({"round": r, "measurements": [dataclasses.asdict(m)
                                                                for m in runs],
                                  "set_apart": got.set_apart.get(r, ""),
                                  "seconds": got.seconds.get(r, 0.0), "canary": got.canary})
            doc["canary_readings"] = {str(c): w.readings for c, w in watch.canaries.items()}
            results.write_json(spec["result"], doc)
    except made.errors as e:
        doc["error"] = {"type": type(e).__name__, "message": str(e)}
        results.write_json(spec["result"], doc)
        return 1
    doc["done"] = True
    results.write_json(spec["result"], doc)
    return 0


def node_watch(made: Portable, plan: Plan, cpu: str, before: dict[str, Any] | None
               ) -> pinning.Watch:
    """The canary of this node's rounds: the CPU its first job of the comparison chose (`before`,
    from the driver) and the readings of its jobs since, so that a round is judged against the
    node's whole comparison, as one that runs here is; else chosen now (--cpu `cpu`)."""
    if not before:
        return pinning.Watch(made.pin(plan, cpu))
    watch = pinning.Watch(pinning.Pin.from_json(before["pin"]))
    for c, readings in before.get("canary_readings", {}).items():
        if int(c) in watch.canaries:
            watch.canaries[int(c)].readings = [float(x) for x in readings]
    return watch


def mark_node(path: str, where: dict[str, str]) -> None:
    """The run's document says where it ran: context.slurm (node, job, partition, cluster, its
    CPU model and the CPUs it was pinned to), which the store takes as its host (docs/json.md).
    A file that is not a JSON object is left as it is."""
    try:
        doc = results.read_json(path)
    except UsageError:   # not JSON (a generic command's output may be anything)
        return
    if isinstance(doc, dict):
        ctx = doc.setdefault("context", {})
        if isinstance(ctx, dict):
            ctx["slurm"] = where
            results.write_json(path, doc)


def exec_job(command: Sequence[str], options: Sequence[str], where: str, name: str,
             poll: float, say: Callable[[str], None]) -> int:
    """kvb worker exec: `command` as a job (here's working directory and environment), its
    output copied to standard output, its exit status returned; a job lost with its node is
    submitted again, RESUBMITS times at most, then 1. Interrupted: the job is cancelled."""
    for attempt in range(RESUBMITS + 1):
        out = os.path.join(where, f"kvb-{name}.{os.getpid()}.{attempt}.out")
        job = slurm.submit(options, command, f"kvb-{name}", out, os.getcwd())
        say(f"kvb: job {job} (kvb-{name}) submitted")
        try:
            st = slurm.wait([job], poll, lambda line: say("kvb: " + line))[job]
        except BaseException:
            slurm.cancel([job])
            raise
        try:
            with open(out, encoding="utf-8", errors="replace") as f:
                sys.stdout.write(f.read())
            sys.stdout.flush()
            os.remove(out)
        except OSError:
            pass
        if not st.lost:
            return 0 if st.state == slurm.COMPLETED else st.exit_code or 1
        say(f"kvb: lost: {st.text()}" + ("; submitting it again" if attempt < RESUBMITS
                                         else ""))
    return 1
