#!/usr/bin/env python3
"""Tests of scripts/slurm-cluster.sh: the Slurm cluster on this machine that kvb's fleet tests run
through (docs/fleet.md#the-local-test-cluster).

Each test class starts a cluster of its own in a temporary directory, on ports of its own (free
ones, drawn at random: two test runs at once on one machine do not meet), and
stops it when it ends, passed or failed (addClassCleanup), or, should this process be killed, from
a watchdog shell. What is asserted is what a driver submitting kvb's jobs relies on: a feature
(-C) picks the architecture's nodes, --exclusive and partition measure give a job its node to
itself, a finished job stays in `scontrol show job` and in the job completion log (`sacct -c`),
and a node that dies mid-job leaves its jobs in states the driver can read (NODE_FAIL, or PENDING
again with Restarts=1 when requeued) while the other nodes go on working.

Needs root and Slurm (scripts/install-deps.sh --slurm); without them it exits 77, which ctest
reports as skipped, saying why.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "slurm-cluster.sh")
SKIP = 77
# The default cluster: node1 and node2 have this machine's architecture as a feature, node3 the
# other one (a stand-in: it runs this machine's code).
ARCH = os.uname().machine
OTHER = "x86_64" if ARCH == "aarch64" else "aarch64"
NATIVE_NODES = {"node1", "node2"}
STANDIN = "node3"


def missing_prerequisite() -> str:
    """Why this test cannot run here, or ''."""
    if os.geteuid() != 0:
        return "not root (slurm-cluster.sh runs the daemons as root)"
    for tool in ("slurmctld", "slurmd", "munged", "sbatch", "sacct"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/install-deps.sh --slurm installs Slurm)"
    return ""


def fields(line: str) -> dict[str, str]:
    """KEY=VALUE pairs of one line of `scontrol show ... -o`."""
    return dict(re.findall(r"(\w[\w/:]*)=(\S*)", line))


class Cluster:
    """A cluster of slurm-cluster.sh in a directory of its own, and the Slurm commands run on it."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="kvb-slurm.", dir="/tmp")
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))
        self._watchdog()

    def _watchdog(self) -> None:
        """Stops the cluster if this process dies without its cleanups (SIGKILL from ctest's
        timeout): a shell in its own session, left behind by the one started here, that polls
        this process once a second. Its command line does not name the directory (StopTest looks
        for processes that do)."""
        watch = ('while kill -0 "$KVB_TEST_PID" 2>/dev/null; do sleep 1; done; '
                 '"$KVB_SCRIPT" stop --dir "$KVB_SLURM_DIR" >/dev/null 2>&1; '
                 'rm -rf "$KVB_SLURM_DIR"')
        env = dict(os.environ, KVB_TEST_PID=str(os.getpid()), KVB_SCRIPT=SCRIPT,
                   KVB_SLURM_DIR=self.dir, KVB_WATCH=watch)
        subprocess.run(["sh", "-c", 'sh -c "$KVB_WATCH" </dev/null >/dev/null 2>&1 &'],
                       env=env, start_new_session=True, check=True)

    def script(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([SCRIPT, *args, "--dir", self.dir], capture_output=True, text=True,
                              timeout=timeout)

    def start(self) -> None:
        """Starts the cluster on a free port and the 3 after it (a port taken meanwhile, which
        start refuses with exit 2, is another draw)."""
        for _ in range(5):
            port = random.randrange(20000, 30000, 4)
            p = self.script("start", "--port", str(port), "--timeout", "120")
            if not (p.returncode == 2 and "is in use" in p.stderr):
                break
        if p.returncode != 0:
            raise AssertionError(f"slurm-cluster.sh start: exit {p.returncode}\n{p.stderr}")

    def stop(self) -> None:
        self.script("stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=timeout)

    def check(self, *cmd: str, timeout: float = 120) -> str:
        p = self.run(*cmd, timeout=timeout)
        if p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}"
                                 f"{self.log_tail()}")
        return p.stdout

    def sbatch(self, *options: str, wrap: str) -> str:
        """Submits a batch job; its id."""
        return self.check("sbatch", "--parsable", *options, "--wrap", wrap).strip()

    def job(self, job_id: str) -> dict[str, str]:
        return fields(self.check("scontrol", "show", "job", "-o", job_id))

    def node_state(self, node: str) -> str:
        return fields(self.check("scontrol", "show", "node", "-o", node))["State"]

    def wait_job(self, job_id: str, states: set[str], timeout: float) -> dict[str, str]:
        """The job's fields once its JobState is one of `states`."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job["JobState"] in states:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} not {sorted(states)} after {timeout:.0f} s: "
                                     f"{job['JobState']} ({job.get('Reason')})"
                                     f"{self.log_tail()}")
            time.sleep(0.5)

    def completions(self) -> list[dict[str, str]]:
        """The job completion log as `sacct -c` lists it (every attempt of a job, one a row)."""
        out = self.check("sacct", "-c", "--parsable2", "--noheader",
                         "--format=JobID,State,NodeList,ExitCode")
        return [dict(zip(("JobID", "State", "NodeList", "ExitCode"), line.split("|")))
                for line in out.splitlines()]

    def output(self, name: str) -> str:
        with open(os.path.join(self.dir, name), encoding="utf-8") as f:
            return f.read()

    def log_tail(self) -> str:
        try:
            with open(os.path.join(self.dir, "log", "slurmctld.log"), encoding="utf-8") as f:
                return "\n--- tail of slurmctld.log\n" + "".join(f.readlines()[-20:])
        except OSError:
            return ""


class ClusterCase(unittest.TestCase):
    cluster: Cluster

    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = Cluster()
        cls.addClassCleanup(cls.cluster.stop)
        cls.cluster.start()


class ClusterTest(ClusterCase):
    def test_nodes_features_and_partitions(self) -> None:
        out = self.cluster.check("sinfo", "-h", "-N", "-o", "%N %P %t %f %c")
        rows = sorted(tuple(line.split()) for line in out.splitlines())
        expected = sorted((node, part, "idle", feature, "2")
                          for node, feature in (("node1", ARCH), ("node2", ARCH),
                                                ("node3", OTHER))
                          for part in ("build*", "measure"))
        self.assertEqual(rows, expected)

    def test_start_again_is_harmless(self) -> None:
        pid_file = os.path.join(self.cluster.dir, "ctld", "slurmctld.pid")
        with open(pid_file, encoding="utf-8") as f:
            before = f.read()
        self.cluster.start()
        with open(pid_file, encoding="utf-8") as f:
            self.assertEqual(f.read(), before, "a second start restarted slurmctld")
        p = self.cluster.script("start", "--nodes", "2")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("running with 3 nodes", p.stderr)

    def test_usage_errors(self) -> None:
        for args, message in ((("kill-node", "node9"), "no node 'node9'"),
                              (("start", "--nodes", "0"), "--nodes must be 1..16"),
                              (("bogus",), "unknown command 'bogus'")):
            p = self.cluster.script(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(message, p.stderr)
        p = self.cluster.script("env")
        self.assertEqual(p.stdout, f"export SLURM_CONF={self.cluster.dir}/slurm.conf\n")

    def test_a_feature_picks_the_architecture(self) -> None:
        job = self.cluster.check("sbatch", "--parsable", "--wait", "-C", ARCH, "-o",
                                 os.path.join(self.cluster.dir, "x86.out"),
                                 "--wrap", "echo $SLURMD_NODENAME").strip()
        node = self.cluster.output("x86.out").strip()
        self.assertIn(node, NATIVE_NODES)
        out = self.cluster.check("srun", "-C", OTHER, "printenv", "SLURMD_NODENAME")
        self.assertEqual(out.strip(), STANDIN)
        # A finished job stays in scontrol (MinJobAge) and in sacct's completion log.
        self.assertEqual(self.cluster.job(job)["JobState"], "COMPLETED")
        self.assertIn({"JobID": job, "State": "COMPLETED", "NodeList": node, "ExitCode": "0:0"},
                      self.cluster.completions())

    def test_exclusive_jobs_never_share_a_node(self) -> None:
        script = ("echo $SLURMD_NODENAME $(date +%s.%N); sleep 3; date +%s.%N")
        jobs = [self.cluster.sbatch("-p", "measure", "--exclusive", "-w", "node1",
                                    "-o", os.path.join(self.cluster.dir, f"pinned{i}.out"),
                                    wrap=script) for i in range(2)]
        spans = []
        for i, job in enumerate(jobs):
            self.assertEqual(self.cluster.wait_job(job, {"COMPLETED"}, 120)["NumCPUs"], "2")
            node, start, end = self.cluster.output(f"pinned{i}.out").split()
            self.assertEqual(node, "node1")
            spans.append((float(start), float(end)))
        spans.sort()
        self.assertLessEqual(spans[0][1], spans[1][0], f"both on node1 at once: {spans}")

    def test_the_measure_partition_gives_whole_nodes(self) -> None:
        # Without --exclusive, partition measure (OverSubscribe=EXCLUSIVE) still allocates whole
        # nodes: two jobs for this architecture that wait for each other to start (a minute at
        # most) run at once on its two nodes.
        started = os.path.join(self.cluster.dir, "started")
        os.mkdir(started)
        wait = (f"touch {started}/$SLURM_JOB_ID; for i in $(seq 600); do "
                f"[ $(ls {started} | wc -l) -ge 2 ] && exit 0; sleep 0.1; done; exit 1")
        jobs = [self.cluster.sbatch("-p", "measure", "-C", ARCH, "-o", "/dev/null", wrap=wait)
                for _ in range(2)]
        done = [self.cluster.wait_job(job, {"COMPLETED", "FAILED"}, 120) for job in jobs]
        self.assertEqual([job["JobState"] for job in done], ["COMPLETED", "COMPLETED"])
        self.assertEqual({job["NodeList"] for job in done}, NATIVE_NODES)
        self.assertEqual([job["NumCPUs"] for job in done], ["2", "2"])


class StopTest(unittest.TestCase):
    def test_stop_ends_every_process_jobs_included(self) -> None:
        cluster = Cluster()
        self.addCleanup(cluster.stop)
        cluster.start()
        pid_file = os.path.join(cluster.dir, "job.pid")
        job = cluster.sbatch("-o", "/dev/null", wrap=f"echo $$ > {pid_file}; sleep 600")
        cluster.wait_job(job, {"RUNNING"}, 120)
        deadline = time.monotonic() + 30
        while not os.path.exists(pid_file) and time.monotonic() < deadline:
            time.sleep(0.2)
        with open(pid_file, encoding="utf-8") as f:
            job_pid = int(f.read())
        p = cluster.script("stop")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(f"/proc/{job_pid}"), "the job's shell outlived stop")
        left = subprocess.run(["pgrep", "-a", "-f", cluster.dir], capture_output=True,
                              text=True).stdout
        self.assertEqual(left, "", "processes of the cluster left after stop")
        p = cluster.script("status")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)


class NodeFailureTest(ClusterCase):
    """node2 dies (slurm-cluster.sh kill-node: its slurmd, job steps and their processes,
    SIGKILL) while two jobs run on it, one that may be requeued and one that may not."""

    def test_a_node_dies_mid_job(self) -> None:
        c = self.cluster
        # node1 is held so that the requeueable job lands on node2, then freed for its rerun.
        holder = c.sbatch("-p", "measure", "-w", "node1", "-o", "/dev/null", wrap="sleep 600")
        c.wait_job(holder, {"RUNNING"}, 120)
        requeued = c.sbatch("--requeue", "-C", ARCH, "--open-mode=append",
                            "-o", os.path.join(c.dir, "requeued.out"),
                            wrap="echo ${SLURM_RESTART_COUNT:-0} $SLURMD_NODENAME; "
                                 "[ ${SLURM_RESTART_COUNT:-0} -gt 0 ] || sleep 600")
        lost = c.sbatch("--no-requeue", "-w", "node2", "-o", "/dev/null", wrap="sleep 600")
        self.assertEqual(c.wait_job(requeued, {"RUNNING"}, 120)["NodeList"], "node2")
        c.wait_job(lost, {"RUNNING"}, 120)
        c.check("scancel", holder)

        killed = time.monotonic()
        p = c.script("kill-node", "node2")
        self.assertEqual(p.returncode, 0, p.stderr)
        # The other nodes go on working while slurmctld has not noticed yet, and after.
        for node in ("node1", "node3"):
            self.assertEqual(c.check("srun", "-w", node, "printenv", "SLURMD_NODENAME").strip(),
                             node)
        failed = c.wait_job(lost, {"NODE_FAIL"}, 150)
        noticed = time.monotonic() - killed
        self.assertEqual(failed["Reason"], "NodeDown")
        again = c.job(requeued)
        self.assertEqual((again["JobState"], again["Restarts"]), ("PENDING", "1"), again)
        self.assertTrue(c.node_state("node2").startswith("DOWN"), c.node_state("node2"))
        self.assertEqual(c.check("srun", "-w", "node3", "true"), "")

        # The requeued job runs again elsewhere once it may (cred_expire after the failure).
        done = c.wait_job(requeued, {"COMPLETED"}, 150)
        rerun = time.monotonic() - killed
        self.assertEqual(done["NodeList"], "node1")
        self.assertEqual(c.output("requeued.out").split("\n"), ["0 node2", "1 node1", ""])
        rows = [(r["JobID"], r["State"], r["NodeList"]) for r in c.completions()]
        self.assertIn((lost, "NODE_FAIL", "node2"), rows)
        self.assertEqual([r for r in rows if r[0] == requeued],
                         [(requeued, "NODE_FAIL", "node2"), (requeued, "COMPLETED", "node1")])
        print(f"\nnode2 killed: NODE_FAIL after {noticed:.0f} s, the requeued job done on node1 "
              f"after {rerun:.0f} s", file=sys.stderr)

        p = c.script("revive-node", "node2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(c.check("srun", "-w", "node2", "printenv", "SLURMD_NODENAME").strip(),
                         "node2")


if __name__ == "__main__":
    reason = missing_prerequisite()
    if reason:
        print(f"slurm_cluster_test: skipped: {reason}")
        sys.exit(SKIP)
    unittest.main(verbosity=2)
