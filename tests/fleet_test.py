#!/usr/bin/env python3
"""kvb's Slurm executor (docs/fleet.md, measure/fleet.py) on a real Slurm cluster on this machine:
scripts/slurm-cluster.sh's three nodes (node1 and node2 with this machine's architecture as their
feature, node3 a stand-in for the other one), partitions build and measure.

- kvb matrix --presets x86-gcc-native,x86-clang-native --micro --slurm measure: its builds are
  jobs of the build partition, its rounds exclusive jobs of the measure partition on both x86
  nodes (never on node3), sacct -c lists them all, the unit line names the hosts, the control is
  not a change, and every run stored names its node (the store's host column and the run's
  context.slurm);
- node2 killed (slurm-cluster.sh kill-node) while its measurement job runs: the matrix finishes
  on node1, names the lost rounds ("lost: job J on node2: NODE_FAIL"), runs them again there, and
  stores every kept run once and none of the lost job's;
- a generic-mode bisect of a generated history (tests/bisect_test.py's) through the cluster names
  the same commit as the same bisect run here.

Timings from the local cluster compare nothing: its nodes share this machine's CPUs. The builds
go to build/kvb/<preset> of this checkout (no-ops once built). Skipped (exit 77) when not root
or Slurm is missing, as slurm_cluster_test.py is.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import unittest

import slurm_cluster_test as sc  # noqa: E402  (tests/slurm_cluster_test.py: the cluster)

ROOT = sc.ROOT
KVB = os.path.join(ROOT, "scripts", "kvb")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bisect_test as bt  # noqa: E402  (its generated repositories)
import kvbtest  # noqa: E402

MATRIX = ["matrix", "--presets", "x86-gcc-native,x86-clang-native", "--micro", "--system-libs",
          "--filter", "xxh3_64/inline/4096", "--slurm", "measure", "--max-time", "45"]


class FleetCase(sc.ClusterCase):
    """A cluster of the class's own, and kvb run against it."""

    def setUp(self) -> None:
        self.tmp = os.path.join(self.cluster.dir, f"t{time.monotonic_ns()}")
        os.makedirs(self.tmp)
        self.store = os.path.join(self.tmp, "store.sqlite")

    def kvb(self, *args: str, env: dict[str, str] | None = None
            ) -> subprocess.Popen[str]:
        return subprocess.Popen(["nice", "-n", "10", sys.executable, KVB, *args],
                                env=dict(self.cluster.env, **(env or {})), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self, p: subprocess.Popen[str], timeout: float = 600
               ) -> subprocess.CompletedProcess[str]:
        out, err = p.communicate(timeout=timeout)
        self.assertNotIn("Traceback", err)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def matrix(self) -> subprocess.Popen[str]:
        return self.kvb(*MATRIX, "--results-dir", os.path.join(self.tmp, "results"),
                        "--store", self.store)

    def results(self) -> dict:
        d = os.path.join(self.tmp, "results")
        (name,) = os.listdir(d)
        with open(os.path.join(d, name, "matrix.json"), encoding="utf-8") as f:
            return json.load(f)

    def stored(self) -> list[tuple[str, dict[str, str]]]:
        """(host, the run's context.slurm) of every stored run (documents are kept gzipped)."""
        with sqlite3.connect(self.store) as db:
            return [(h, json.loads(gzip.decompress(x)).get("context", {}).get("slurm", {}))
                    for h, x in db.execute("SELECT host, document FROM documents")]

    def jobs(self) -> list[dict[str, str]]:
        """Every job of the completion log (sacct -c), one row an attempt."""
        out = self.cluster.check("sacct", "-c", "--parsable2", "--noheader",
                                 "--format=JobID,JobName,Partition,NodeList,State")
        keys = ("JobID", "JobName", "Partition", "NodeList", "State")
        return [dict(zip(keys, line.split("|"))) for line in out.splitlines()]


class FleetMatrixTest(FleetCase):
    def test_a_matrix_runs_its_builds_and_rounds_as_jobs(self) -> None:
        t0 = time.monotonic()
        p = self.finish(self.matrix())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        jobs = [j for j in self.jobs() if j["JobName"].startswith("kvb-")]
        builds = [j for j in jobs if j["JobName"].startswith("kvb-build-")]
        measure = [j for j in jobs if j["JobName"] == "kvb-measure"]
        # A build's two steps (cmake's configure, then its build) are a job each.
        self.assertEqual(sorted(j["JobName"] for j in builds),
                         ["kvb-build-x86-clang-native"] * 2 + ["kvb-build-x86-gcc-native"] * 2,
                         jobs)
        self.assertEqual({(j["Partition"], j["State"]) for j in builds}, {("build", "COMPLETED")})
        self.assertEqual({(j["Partition"], j["State"]) for j in measure},
                         {("measure", "COMPLETED")})
        # Each measurement job had its node to itself, and only x86 nodes measured x86 builds.
        self.assertEqual({j["NodeList"] for j in measure}, sc.NATIVE_NODES)
        for j in measure:
            got = sc.fields(self.cluster.check("scontrol", "show", "job", "-o", j["JobID"]))
            self.assertEqual((got["OverSubscribe"], got["NumCPUs"]), ("NO", "2"), got)
        # The unit line names the hosts; two are too few to be the unit.
        unit = next(x for x in p.stdout.splitlines() if x.startswith("unit: "))
        self.assertIn("pooled over 2 hosts (node1, node2: too few to rest on, 3 needed)", unit)
        self.assertRegex(p.stdout, r"\ncpu: chosen on each node: node1: every run on CPU \d.*; "
                                   r"node2: every run on CPU \d")
        doc = self.results()
        control = next(r for r in doc["rows"] if r["side"] == "control")
        self.assertNotIn(control["verdict"], ("faster", "slower"), control)
        kept = [r for r in doc["runs"] if not r["set_apart"]]
        self.assertEqual({r["host"] for r in kept}, sc.NATIVE_NODES)
        # Every run stored names its node, and each kept run is stored once.
        stored = self.stored()
        self.assertEqual(len(stored), len(kept))
        self.assertTrue(all(h == where["node"] and h in sc.NATIVE_NODES and where["cpu_model"]
                            for h, where in stored), stored)
        print(f"\nthe matrix on the cluster: {time.monotonic() - t0:.0f} s, "
              f"{len(measure)} measurement jobs", file=sys.stderr)


class ArchitectureTest(FleetCase):
    def test_each_preset_goes_to_its_architectures_nodes(self) -> None:
        # node3 stands in for an aarch64 node and runs this machine's x86 code: an ARM preset's
        # build goes there and fails there (its compiler is this machine's, which CMake
        # refuses for an aarch64 preset), so this checks only where each job went and how the
        # architectures are labelled, not an ARM measurement.
        results = os.path.join(self.tmp, "results")
        args = [a if a != "x86-gcc-native,x86-clang-native" else "x86-gcc-native,arm-gcc-native"
                for a in MATRIX]
        p = self.finish(self.kvb(*args[:-1], "15", "--results-dir", results, "--no-store"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("kvb: error: aarch64: matrix: the first build failed", p.stderr)
        where = {(j["JobName"], j["NodeList"]) for j in self.jobs()}
        self.assertIn(("kvb-build-arm-gcc-native", sc.STANDIN), where)
        self.assertEqual({n for j, n in where if j == "kvb-build-x86-gcc-native"} - sc.NATIVE_NODES,
                         set())
        self.assertEqual({n for j, n in where if j == "kvb-measure"} - sc.NATIVE_NODES, set())
        with open(os.path.join(ROOT, "build", "kvb", "arm-gcc-native", "kvb-build.log"),
                  encoding="utf-8") as f:
            self.assertIn("targets aarch64 and this machine is x86_64", f.read())
        (name,) = os.listdir(results)
        with open(os.path.join(results, name, "architectures.txt"), encoding="utf-8") as f:
            table = f.read()
        self.assertRegex(table, r"\n  x86_64: node1, node2 \(.+\)\n  aarch64: not measured: "
                                r"matrix: the first build failed")
        self.assertRegex(table, r"\nbytes_per_second \[GB/s\], medians +x86_64: x86-gcc-native\n"
                                r"xxh3_64/inline/4096 +\d")
        self.assertTrue(os.path.exists(os.path.join(results, name, "x86_64", "matrix.json")))


class NodeFailureTest(FleetCase):
    def test_a_node_dies_mid_measurement(self) -> None:
        t0 = time.monotonic()
        p = self.matrix()
        deadline = time.monotonic() + 500
        job = ""
        while not job and time.monotonic() < deadline and p.poll() is None:
            out = self.cluster.check("squeue", "-h", "-o", "%i %j %N %T")
            job = next((x.split()[0] for x in out.splitlines()
                        if x.split()[1:] == ["kvb-measure", "node2", "RUNNING"]), "")
            time.sleep(0.5)
        self.assertTrue(job, "no measurement job ran on node2")
        time.sleep(2)   # inside its rounds
        killed = self.cluster.script("kill-node", "node2")
        self.assertEqual(killed.returncode, 0, killed.stderr)
        got = self.finish(p)
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        lost = f"lost: job {job} on node2: NODE_FAIL"
        self.assertIn(lost, got.stderr)
        doc = self.results()
        named = [int(r) for r, why in doc["set_apart"].items() if lost in why]
        self.assertTrue(named, doc["set_apart"])
        self.assertIn(f"{len(named)} lost with their jobs and run again", doc["cost"]["text"])
        # The lost rounds' runs are on record, set apart; what was kept ran elsewhere after.
        runs = doc["runs"]
        self.assertTrue(all(r["set_apart"] for r in runs if r["round"] in named))
        kept = [r for r in runs if not r["set_apart"]]
        self.assertTrue(any(r["host"] == "node1" and r["round"] > max(named) for r in kept))
        # Nothing lost or stored twice: the kept runs, each once, none of the lost job's.
        stored = self.stored()
        self.assertEqual(len(stored), len(kept))
        self.assertNotIn(job, {where["job"] for _, where in stored})
        self.assertIn((job, "NODE_FAIL", "node2"),
                      {(j["JobID"], j["State"], j["NodeList"]) for j in self.jobs()})
        print(f"\nnode2 killed under job {job}: the matrix done in "
              f"{time.monotonic() - t0:.0f} s, {len(named)} rounds lost and run again",
              file=sys.stderr)
        revived = self.cluster.script("revive-node", "node2")
        self.assertEqual(revived.returncode, 0, revived.stderr)


class FleetBisectTest(FleetCase):
    def test_a_generic_bisect_names_the_same_commit_on_the_cluster(self) -> None:
        repo = bt.Repo(self.tmp, bt.history(10, 13))
        c = repo.commits
        found = {}
        for where in ("here", "cluster"):
            args = ["bisect", "--repo", repo.path, "--build-cmd", bt.BUILD, "--measure-cmd",
                    "./bench", "--results-dir", os.path.join(self.tmp, where), "--no-store",
                    "--layouts", "1", "--old", c[0], "--new", "main", "--repeats", "4"]
            env = dict(repo.env, KVB_TEST_NOISE=bt.CLEAN, KVB_TEST_SEED="1",
                       KVB_TEST_RUNS=os.path.join(self.tmp, f"runs-{where}.txt"))
            got = self.finish(self.kvb(*args, *(["--slurm", "measure"] if where == "cluster"
                                                else []), env=env))
            self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
            found[where] = re.findall(r"^first new commit: (\w+)$", got.stdout, re.M)
            if where == "cluster":
                self.assertIn("chosen on each node: node", got.stdout)
                self.assertRegex(got.stderr, r"job \d+ on node[12]: COMPLETED")
        self.assertEqual(found["here"], [c[bt.CHANGE]])
        self.assertEqual(found["cluster"], found["here"])
        names = {j["JobName"] for j in self.jobs()}
        self.assertTrue({"kvb-build-bisect", "kvb-measure"} <= names, names)

    def test_two_nodes_measure_two_candidates_a_step(self) -> None:
        # Multisection with k = the nodes (issue 45, item 4): here one candidate a step (git
        # bisect's), on the cluster --candidates auto, which takes a candidate a node (node1,
        # node2) with the builds side by side on them; the same commit in fewer steps.
        os.makedirs(os.path.join(self.tmp, "multi"))
        repo = bt.Repo(os.path.join(self.tmp, "multi"), bt.multi_history())
        c = repo.commits
        docs, took = {}, {}
        for where, extra in (("here", ["--candidates", "1"]), ("cluster", ["--slurm", "measure"])):
            t0 = time.monotonic()
            results = os.path.join(self.tmp, f"multi-{where}")
            env = dict(repo.env, KVB_TEST_NOISE=bt.CLEAN, KVB_TEST_SEED="1",
                       KVB_TEST_RUNS=os.path.join(self.tmp, f"multi-runs-{where}.txt"))
            got = self.finish(self.kvb(
                "bisect", "--repo", repo.path, "--build-cmd", bt.BUILD, "--measure-cmd",
                "./bench", "--results-dir", results, "--no-store", "--layouts", "1", "--old",
                c[0], "--new", c[-1], "--repeats", "4", *extra, env=env))
            took[where] = time.monotonic() - t0
            self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
            self.assertIn(f"first new commit: {c[bt.MULTI_CHANGE]}", got.stdout)
            (name,) = os.listdir(results)
            docs[where] = bt.step_records(kvbtest.load_json(os.path.join(results, name,
                                                                         "bisect.json")))
        here, there = docs["here"], docs["cluster"]
        self.assertEqual({r["kind"] for r in here}, {"step"})
        self.assertLess(len(there), len(here), (len(there), len(here)))
        first = there[0]
        self.assertEqual((first["kind"], first["k"]), ("multistep", 2), got.stdout)
        up = ", ".join(sorted(sc.NATIVE_NODES))
        self.assertIn(f"(k=2: 2 measurement node(s) of measure up ({up}), a candidate each)",
                      got.stderr)
        self.assertIn("a candidate a step on each measurement node of measure up (--candidates "
                      "auto with --slurm)", got.stdout)   # the plan line
        # Each candidate measured with old and new on a node of its own: its own job's rounds.
        nodes = first["nodes"]
        self.assertEqual(sorted(n for ns in nodes.values() for n in ns), sorted(sc.NATIVE_NODES))
        ends = f"{c[0][:12]}, {c[-1][:12]}"
        for cand in first["candidates"]:
            self.assertRegex(got.stderr, rf"job \d+: rounds \d+-\d+ of {ends}, "
                                         rf"{cand['commit'][:12]} on a ")
        self.assertRegex(got.stdout, r"step 1: 2 candidates, 2 measured with old and new each "
                                     r"on a node of its own, in rounds of its own: c1 on node\d, "
                                     r"c2 on node\d")
        print(f"\nmultisection on the cluster: {len(there)} steps (k="
              f"{', '.join(str(r.get('k', 1)) for r in there)}) in {took['cluster']:.0f} s; "
              f"here at k=1: {len(here)} steps in {took['here']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    reason = sc.missing_prerequisite()
    if reason:
        print(f"fleet_test: skipped: {reason}")
        sys.exit(sc.SKIP)
    unittest.main(verbosity=2)
