#!/usr/bin/env python3
"""kvb bisect end to end on generated git repositories of a tiny C library (run by ctest).

The library's speed is real code: lib_sum makes PASSES passes over the buffer, and a commit that
changes PASSES is a real performance change. The benchmark (bench.c, built by the bisect's build
command) counts the work it does instead of timing it, and multiplies its cost by noise the test
controls (KVB_TEST_NOISE: log-normal sigma, the probability of a slow outlier and its range), so
every scenario is repeatable on a loaded machine: the same seed gives the same values in the
same order. It appends its working directory (the commit's worktree, named by the commit) to
KVB_TEST_RUNS, one line per run, which counts the measurements.
"""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KVB = os.path.join(ROOT, "scripts", "kvb")
# Results directories of bisects interrupted under previous releases (state.json schema 1, 2 and
# 3; made by tests/data/bisect_v1/make_fixture.py).
FIXTURES = {v: os.path.join(ROOT, "tests", "data", f"bisect_v{v}") for v in (1, 2, 3)}
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from kvbtools.core import levels, metrics  # noqa: E402
from kvbtools.core.errors import UsageError  # noqa: E402
from kvbtools.core.stats import Judgement  # noqa: E402
from kvbtools.measure.bisect import judge  # noqa: E402
from kvbtools.measure.bisect import ranges as bisect_ranges  # noqa: E402
from kvbtools.measure.bisect import sections  # noqa: E402
from kvbtools.measure.bisect import steps as bisect_steps  # noqa: E402
from kvbtools.measure.bisect import records as bisect_records  # noqa: E402
from kvbtools.measure.bisect import series as bisect_series  # noqa: E402
from kvbtools.measure.bisect import slots as bisect_slots  # noqa: E402
from kvbtools.measure.bisect import state as bisect_state  # noqa: E402
from kvbtools.commands import arguments  # noqa: E402
from kvbtools.measure import loop, pinning  # noqa: E402
from kvbtools.measure.executor import LocalExecutor  # noqa: E402
from kvbtools.measure.plan import Budget, Measurement, Plan, Variant  # noqa: E402
from kvbtools.measure.runner import Workload  # noqa: E402
from kvbtools.measure.bisect.trees import tracer  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)

LIB = """#include <stddef.h>
#include <stdint.h>
/* %s */
uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops) {
  uint64_t s = 0;
  for (int r = 0; r < %d; r++) {
    for (size_t i = 0; i < n; i++) s += (uint64_t)p[i] * (i | 1);
    *ops += n;
  }
  return s;
}
"""

BENCH = r"""#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);
static uint64_t state;
static double uniform(void) {  /* xorshift64* */
  state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
  return (double)((state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}
int main(void) {
  static unsigned char buf[4096];
  for (int i = 0; i < 4096; i++) buf[i] = (unsigned char)(i * 7);
  uint64_t ops = 0, sink = lib_sum(buf, sizeof buf, &ops);
  double ns = ops * 0.25;  /* the cost model: 0.25 ns per byte pass */
  double sigma = 0, p_out = 0, lo = 1, hi = 1, speed = 1;
  const char *noise = getenv("KVB_TEST_NOISE"), *runs = getenv("KVB_TEST_RUNS");
  if (noise) sscanf(noise, "%lf,%lf,%lf,%lf", &sigma, &p_out, &lo, &hi);
  long index = 0;
  char cwd[4096] = "", line[4096];
  if (!getcwd(cwd, sizeof cwd)) return 1;
  if (runs) {
    FILE *f = fopen(runs, "a+");
    rewind(f);
    while (fgets(line, sizeof line, f)) index++;
    fprintf(f, "%s\n", cwd);
    fclose(f);
  }
  FILE *cfg = fopen("speed.cfg", "r");  /* read at run time, never compiled */
  if (cfg) { if (fscanf(cfg, "%lf", &speed) != 1) speed = 1; fclose(cfg); }
  const char *seed = getenv("KVB_TEST_SEED");
  state = 0x9E3779B97F4A7C15ULL * (uint64_t)(atol(seed ? seed : "1") * 1000003 + index + 1);
  for (int i = 0; i < 4; i++) uniform();
  double u1 = uniform(), u2 = uniform(), u3 = uniform(), u4 = uniform();
  double z = sqrt(-2 * log(u1 + 1e-300)) * cos(6.283185307179586 * u2);
  ns *= speed * exp(sigma * z);
  if (u3 < p_out) ns *= lo + (hi - lo) * u4;
  if (getenv("KVB_TEST_SLEEP_MS")) usleep(1000 * atoi(getenv("KVB_TEST_SLEEP_MS")));
  printf("{\"context\": {\"library\": \"tiny\", \"sink\": %llu},\n"
         " \"benchmarks\": [{\"name\": \"sum/4096\", \"run_name\": \"sum/4096\", "
         "\"run_type\": \"iteration\", \"iterations\": 1, \"real_time\": %.17g, "
         "\"cpu_time\": %.17g, \"time_unit\": \"ns\", \"bytes_per_second\": %.17g}]}\n",
         (unsigned long long)sink, ns, ns, 4096.0 / ns * 1e9);
  return 0;
}
"""
BUILD = "cc -O0 -o bench bench.c sum.c -lm"
CLEAN = "0.01,0,1,1"          # 1% log-normal noise, no outliers
OUTLIERS = "0.02,0.3,1.25,1.6"  # 2%, and 3 runs in 10 slowed by 25-60%


class Repo:
    """A generated repository: commits[i] is the i-th commit's hash."""

    def __init__(self, tmp: str, history: list[tuple[str, dict[str, str]]]) -> None:
        self.path = os.path.join(tmp, "tiny")
        os.makedirs(self.path)
        # KVB_PYTHON_CHOSEN: kvb runs under this interpreter instead of re-executing itself;
        # KVBENCH_STORE: should a run be stored (the tests give --no-store: the toy benchmark's
        # JSON names no host or date), it goes to a store of the test's own.
        self.env = dict(os.environ, KVB_PYTHON_CHOSEN="1",
                        KVBENCH_STORE=os.path.join(tmp, "store.sqlite"),
                        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                        GIT_COMMITTER_DATE="2024-02-01T12:00:00+00:00",
                        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
                        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        self.git("init", "-q", "-b", "main")
        self.commits: list[str] = []
        for i, (msg, files) in enumerate(history):
            for name, text in files.items():
                with open(os.path.join(self.path, name), "w") as f:
                    f.write(text)
            self.git("add", "-A")
            self.git("commit", "-q", "-m", msg, "--date", f"2024-01-0{i + 1}T12:00:00+00:00")
            self.commits.append(self.git("rev-parse", "HEAD"))

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.path, *args], check=True, capture_output=True,
                              text=True, env=self.env).stdout.strip()


CHANGE = 6    # the commit that changes the library's speed
LAST = 8


def history(fast: int, slow: int) -> list[tuple[str, dict[str, str]]]:
    """Nine commits: #4, the first one a bisect of #0..#8 tests, does not compile; #6 changes
    PASSES from `fast` to `slow`; the others change nothing the build compiles, or a comment
    (#2; #5 restores #2's sources)."""
    return [
        ("initial library and benchmark", {"sum.c": LIB % ("v1", fast), "bench.c": BENCH}),
        ("docs", {"README": "tiny\n"}),
        ("comment", {"sum.c": LIB % ("v2", fast)}),
        ("more docs", {"README": "tiny library\n"}),
        ("break the build", {"sum.c": LIB % ("v2", fast) + "this does not compile\n"}),
        ("fix the build", {"sum.c": LIB % ("v2", fast)}),
        ("change lib_sum", {"sum.c": LIB % ("v3", slow)}),
        ("docs again", {"README": "tiny library, summing\n"}),
        ("last", {"NOTES": "x\n"}),
    ]


class BisectCase(kvbtest.TempDirTest):
    """Runs kvb bisect on generated repositories (the tests are in the subclasses)."""
    TMP_PREFIX = "kvb-bisect-test."

    def setUp(self) -> None:
        super().setUp()
        self.runs = os.path.join(self.tmp, "runs.txt")

    def need_tracing(self) -> None:
        """Skips, with the reason, where bisect cannot learn what a build compiles (strace)."""
        why = tracer()  # bisect's own check: qemu-user has no ptrace
        if why:
            self.skipTest(why)

    def kvb_env(self, repo: Repo, noise: str, seed: int = 1, runs: str = "",
                **extra: str) -> dict[str, str]:
        return dict(repo.env, KVB_TEST_NOISE=noise, KVB_TEST_SEED=str(seed),
                    KVB_TEST_RUNS=runs or self.runs, **extra)

    def args(self, repo: Repo, *extra: str, defaults: bool = False) -> list[str]:
        # One link a commit: this toy benchmark has no placement (bisect_layouts_test.py has);
        # one candidate a step, git bisect's (MultisectionTest measures several); `defaults`:
        # neither, kvb bisect's own.
        own = defaults or "--resume" in extra
        layouts = [] if "--layouts" in extra or own else ["--layouts", "1"]
        k = [] if "--candidates" in extra or own else ["--candidates", "1"]
        return [sys.executable, KVB, "bisect", "--repo", repo.path, "--build-cmd", BUILD,
                "--measure-cmd", "./bench", "--results-dir", os.path.join(self.tmp, "results"),
                "--no-store", *layouts, *k, *extra]

    def bisect(self, repo: Repo, noise: str, *extra: str, seed: int = 1
               ) -> subprocess.CompletedProcess[str]:
        return self.bisects([(repo, noise, list(extra), seed)])[0]

    def bisects(self, runs: list[tuple[Repo, str, list[str], int]]
                ) -> list[subprocess.CompletedProcess[str]]:
        """Independent bisects, side by side (each seed counts its own runs, so its noise
        does not depend on the others')."""
        procs = []
        for i, (repo, noise, extra, seed) in enumerate(runs):
            env = self.kvb_env(repo, noise, seed, runs=self.runs if len(runs) == 1 else
                               os.path.join(self.tmp, f"runs-{i}.txt"))
            procs.append(subprocess.Popen(self.args(repo, *extra), env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        done = []
        for p, run in zip(procs, runs):
            out, err = p.communicate(timeout=300)
            self.assertNotIn("Traceback", err)
            done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
        return done

    def measured(self) -> int:
        if not os.path.exists(self.runs):
            return 0
        with open(self.runs) as f:
            return sum(1 for _ in f)

    def results_dirs(self) -> list[str]:
        d = os.path.join(self.tmp, "results")
        return sorted(os.path.join(d, x) for x in os.listdir(d))

    def assert_clean(self, repo: Repo) -> None:
        self.assertEqual(len(repo.git("worktree", "list").splitlines()), 1)
        self.assertEqual(repo.git("for-each-ref", "refs/bisect"), "")
        self.assertEqual(repo.git("symbolic-ref", "HEAD"), "refs/heads/main")

    @staticmethod
    def read(path: str) -> str:
        with open(path) as f:
            return f.read()

    def lines(self, path: str) -> list[dict]:
        with open(path) as f:
            return [json.loads(x) for x in f]



class BisectTest(BisectCase):
    # ---- finding the change -----------------------------------------------------------------

    def test_finds_a_slow_down_skipping_what_cannot_matter(self) -> None:
        self.need_tracing()
        repo = Repo(self.tmp, history(10, 13))   # #6: 30% more work, so 23% less throughput
        c = repo.commits
        p = self.bisect(repo, CLEAN, "--good", c[0], "--bad", "main", "--repeats", "4")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        out = p.stdout
        self.assertIn(f"first new commit: {c[CHANGE]}", out)
        self.assertIn("  change lib_sum\n  author date: 2024-01-07T12:00:00+00:00\n"
                      "  files it changed that the build compiles: sum.c\n", out)
        self.assertRegex(out, r"time: this/parent 0\.7\d\d \[0\.7\d\d, 0\.7\d\d\], p=\S+ "
                              r"\(Yuen's trimmed t, two-sided, on \d+ paired rounds\): slower")
        self.assertRegex(out, r"this commit explains (9\d|10\d)%.*\nconfirmed\n")
        # The unit of every verdict is named.
        self.assertRegex(out, r"old -> new: new/old 0\.\d+ \[.*\] \(\d+ paired rounds;")
        # The commit that does not compile is skipped with the reason; commits that compile
        # what a judged commit compiles take its verdict with no build and no run.
        self.assertIn(f"{c[4][:12]} skipped: does not build: sh -c {BUILD} failed (1)", out)
        self.assertRegex(out, r"like (old|new): no build, no run: it compiles the same sources")
        doc = json.loads(self.read(os.path.join(self.results_dirs()[0], "bisect.json")))
        self.assertEqual(doc["first_new"], c[CHANGE])
        self.assertTrue(doc["confirmed"])
        self.assertEqual(sorted(doc["compiled"]["files"]), ["bench.c", "sum.c"])
        built = [r["commit"] for r in doc["records"] if r.get("how") == "measured"]
        self.assertNotIn(c[7], built)  # the docs-only commits were never measured
        self.assertIn("confirmed: ", self.read(os.path.join(self.results_dirs()[0],
                                                            "summary.txt")))
        self.assert_clean(repo)
        print(f"\n{out}cost of this bisect: {doc['totals']}", file=sys.stderr)

    def test_finds_a_speed_up_in_a_lower_is_better_metric(self) -> None:
        repo = Repo(self.tmp, history(13, 10))
        c = repo.commits
        common = ["--old", c[0], "--new", c[LAST], "--metric", "cpu_time", "--repeats", "4"]
        p, refused = self.bisects([(repo, CLEAN, [*common, "--find", "faster"], 1),
                                   (repo, CLEAN, common, 2)])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"first new commit: {c[CHANGE]}", p.stdout)
        self.assertRegex(p.stdout, r"this/parent 0\.7\d\d .*: faster\n")
        self.assertIn("cpu_time [us], lower is better", p.stdout)
        # Looking for a slow-down there is refused, naming the change that is there.
        self.assertEqual(refused.returncode, 4, refused.stdout + refused.stderr)  # no answer
        self.assertIn("old -> new is not slower but faster", refused.stderr)
        self.assertIn("--find faster", refused.stderr)
        summaries = [self.read(os.path.join(d, "summary.txt")) for d in self.results_dirs()]
        self.assertEqual(sum("refused: old -> new is not slower but faster" in x
                             for x in summaries), 1, summaries)
        self.assert_clean(repo)

    def test_every_run_is_pinned_to_one_cpu(self) -> None:
        # The measure command records the CPUs it may run on, and KVB_CPU.
        repo = Repo(self.tmp, history(10, 13))
        c = repo.commits
        cpus = os.path.join(self.tmp, "cpus.txt")
        argv = self.args(repo, "--old", c[0], "--new", c[LAST], "--repeats", "4")
        argv[argv.index("./bench")] = (f"grep Cpus_allowed_list /proc/self/status >> {cpus}; "
                                       f"echo KVB_CPU=$KVB_CPU >> {cpus}; ./bench")
        p = subprocess.run(argv, env=self.kvb_env(repo, CLEAN), capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        doc = kvbtest.load_json(os.path.join(self.results_dirs()[0], "bisect.json"))
        cpu = doc["cpu"]
        self.assertIsInstance(cpu, int)
        self.assertRegex(p.stdout, rf"every run on CPU {cpu} \(")
        with open(cpus) as f:
            seen = set(f.read().split("\n")) - {""}
        self.assertEqual(seen, {f"Cpus_allowed_list:\t{cpu}", f"KVB_CPU={cpu}"})

    def test_heavy_outliers_find_it_or_say_could_not_decide(self) -> None:
        # Three runs in ten slowed by 25-60%, as large as the change itself; default settings.
        repo = Repo(self.tmp, history(10, 13))
        c = repo.commits
        seeds = (1, 2, 3)
        done = self.bisects([(repo, OUTLIERS, ["--old", c[0], "--new", c[LAST]], seed)
                             for seed in seeds])
        for seed, p in zip(seeds, done):
            blamed = [x for x in p.stdout.splitlines() if x.startswith("first new commit:")]
            self.assertTrue(blamed == [f"first new commit: {c[CHANGE]}"] or
                            (not blamed and "could not decide" in p.stdout),
                            f"seed {seed}:\n{p.stdout}{p.stderr}")
        self.assertGreaterEqual(sum(p.returncode == 0 for p in done), 1,
                                "the outliers should not hide a 23% change every time")
        self.assert_clean(repo)

    def test_a_change_within_the_noise_is_not_decided(self) -> None:
        repo = Repo(self.tmp, history(33, 34))   # 3% under 5% noise
        p = self.bisect(repo, "0.05,0,1,1", "--old", repo.commits[0], "--new", "main",
                        "--max-rounds", "12")
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)  # undecided
        self.assertRegex(p.stdout, r"could not decide between old [0-9a-f]{12} and new "
                                   r"[0-9a-f]{12}: the change is within the noise at n=12")
        self.assertNotIn("first new commit", p.stdout)

    def test_a_commit_that_changes_nothing_compiled_is_not_confirmed(self) -> None:
        self.need_tracing()
        # #6 changes only speed.cfg, which the benchmark reads at run time and the build never
        # compiles: the measurements change there, the code does not.
        h = history(10, 10)
        h[CHANGE] = ("tune the benchmark's configuration", {"speed.cfg": "1.3\n"})
        repo = Repo(self.tmp, h)
        c = repo.commits
        p, hashed = self.bisects([
            (repo, CLEAN, ["--old", c[0], "--new", c[LAST], "--no-skip-identical", "--repeats",
                           "4"], 1),
            (repo, CLEAN, ["--old", c[0], "--new", c[LAST], "--repeats", "4"], 2)])
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)  # not confirmed
        self.assertIn(f"first new commit: {c[CHANGE]}", p.stdout)
        self.assertIn("files it changed that the build compiles: none (and 1 it does not)",
                      p.stdout)
        self.assertIn("not confirmed: it changes nothing the build compiles", p.stdout)
        # By content hash, the commits from #2 on compile what new compiles (but #4): the
        # search never builds them, and the one commit left to blame (#2, a comment) does not
        # confirm.
        p = hashed
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)  # not confirmed
        self.assertIn(f"first new commit: {c[2]}", p.stdout)
        self.assertIn("not confirmed: it does not differ significantly from its parent",
                      p.stdout)
        self.assertIn(f"like new: no build, no run: it compiles the same sources as "
                      f"{c[LAST][:12]}", p.stdout)
        self.assertNotIn("uncertain", p.stdout)

    # ---- operability ------------------------------------------------------------------------

    def test_ctrl_c_then_resume_without_measuring_again(self) -> None:
        repo = Repo(self.tmp, history(10, 13))
        c = repo.commits
        env = self.kvb_env(repo, CLEAN, KVB_TEST_SLEEP_MS="40")
        proc = subprocess.Popen(self.args(repo, "--old", c[0], "--new", c[LAST], "--repeats", "4"),
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True,
                                # A test run in the background of a non-interactive shell
                                # inherits SIGINT ignored, and so would kvb: it would finish
                                # instead of being interrupted.
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        steps = ""
        while time.monotonic() < deadline and proc.poll() is None:
            dirs = os.listdir(os.path.join(self.tmp, "results")) \
                if os.path.isdir(os.path.join(self.tmp, "results")) else []
            steps = os.path.join(self.tmp, "results", dirs[0], "steps.jsonl") if dirs else ""
            # Interrupt in the middle of the first measured step (after the endpoints).
            if steps and os.path.exists(steps) and \
                    any(r.get("kind") == "step" for r in self.lines(steps)) and \
                    self.measured() % 3 == 2:
                os.killpg(proc.pid, signal.SIGINT)
                break
            time.sleep(0.01)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, out + err)
        self.assertNotIn("Traceback", err)
        self.assertEqual([x for x in err.splitlines() if "interrupted" in x],
                         [err.splitlines()[-1]])
        self.assertRegex(err.splitlines()[-1], r"^kvb: interrupted; the \d+ finished step\(s\) "
                                               r"are kept: kvb bisect --resume .* continues$")
        outdir = os.path.dirname(steps)
        self.assertIn("interrupted", self.read(os.path.join(outdir, "summary.txt")))
        self.assert_clean(repo)
        before = self.lines(steps)
        runs_before = self.measured()
        p = subprocess.run([sys.executable, KVB, "bisect", "--resume", outdir, "--no-store"],
                           capture_output=True, text=True, env=self.kvb_env(repo, CLEAN),
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"first new commit: {c[CHANGE]}", p.stdout)
        after = self.lines(steps)
        self.assertEqual(after[:len(before)], before)   # the finished series are kept as is
        new_values = sum(len(v) for r in after[len(before):] for v in
                         {id(x): x for x in (r.get("values") or {}).values()}.values())
        # Every run of the resumed bisect belongs to a series it had not finished.
        self.assertEqual(self.measured() - runs_before, new_values)
        self.assertEqual(sum(r["kind"] == "endpoints" for r in after), 1)
        self.assert_clean(repo)

    def v1_directory(self, name: str, version: int = 1) -> tuple[Repo, str, list[str]]:
        """A copy of tests/data/bisect_v<version>/<name> (see make_fixture.py), on a history
        generated here: the fixture's commits, its repository path swapped for this one's.
        Returns the repository, the directory and the fixture's lines of steps.jsonl."""
        src = os.path.join(FIXTURES[version], name)
        repo = Repo(os.path.join(self.tmp, f"v{version}-{name}"), history(10, 13))
        d = os.path.join(self.tmp, "results", f"v{version}-{name}")
        os.makedirs(d)
        state = kvbtest.load_json(os.path.join(src, "state.json"))
        self.assertEqual(state["schema_version"], version)
        self.assertEqual([state["old"], state["new"]], [repo.commits[0], repo.commits[LAST]])
        kvbtest.write_json(os.path.join(d, "state.json"), dict(state, repo=repo.path))
        shutil.copy(os.path.join(src, "steps.jsonl"), d)
        with open(os.path.join(d, "steps.jsonl")) as f:
            return repo, d, f.readlines()

    def test_resumes_a_bisect_interrupted_under_the_previous_releases(self) -> None:
        # Interrupted after the endpoints (one link a commit) and in the confirmation (three
        # links, three steps: skipped, measured, same sources), under state.json schema 1 and 2;
        # and under schema 3 (four links), the current one.
        for version, name, extra in ((1, "after_endpoints", ["--repeats", "4"]),
                                     (1, "after_step", ["--layouts", "3"]),
                                     (2, "after_step", ["--layouts", "3"]),
                                     (3, "after_endpoints", ["--repeats", "4"]),
                                     (3, "after_step", ["--layouts", "4"])):
            with self.subTest(f"v{version} {name}"):
                repo, d, before = self.v1_directory(name, version)
                c = repo.commits
                old_totals = kvbtest.load_json(os.path.join(d, "state.json"))["totals"]
                runs_before = self.measured()
                p = subprocess.run([sys.executable, KVB, "bisect", "--resume", d, "--no-store"],
                                   capture_output=True, text=True,
                                   env=self.kvb_env(repo, CLEAN), timeout=300)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"first new commit: {c[CHANGE]}", p.stdout)
                with open(os.path.join(d, "steps.jsonl")) as f:
                    after = f.readlines()
                self.assertEqual(after[:len(before)], before)   # kept byte for byte
                doc = kvbtest.load_json(os.path.join(d, "bisect.json"))
                self.assertEqual(doc["records"][:len(before)], [json.loads(x) for x in before])
                # Nothing finished is measured again, and the totals go on from the old ones.
                added = sum(len(v) for x in after[len(before):] for v in
                            {id(v): v for v in json.loads(x).get("values", {}).values()}.values())
                self.assertEqual(self.measured() - runs_before, added)
                self.assertEqual(doc["totals"]["runs"], old_totals["runs"] + added)
                state = kvbtest.load_json(os.path.join(d, "state.json"))
                self.assertEqual(state["schema_version"], 4)
                # It ends as the same bisect run without a break under this kvb does.
                whole = self.bisect(repo, CLEAN, "--old", c[0], "--new", c[LAST], *extra)
                self.assertEqual(whole.returncode, 0, whole.stdout + whole.stderr)
                fresh = [x for x in self.results_dirs() if x != d]
                ref = json.loads(self.read(os.path.join(fresh[0], "bisect.json")))
                # What a build compiles is learnt by tracing it: where bisect cannot (qemu-user
                # has no ptrace), the fresh run has no record and measures the commits that
                # compile the same sources, where the resumed one keeps its fixture's record
                # ("same sources"): the same steps and verdicts, reached another way.
                traced = not tracer()
                keys = ("first_new", "confirmed", "benchmark", "metric") + \
                    (("compiled",) if traced else ())
                for key in keys:
                    self.assertEqual(doc[key], ref[key], key)
                steps = [[(r["step"], r["commit"], r["verdict"]) + ((r["how"],) if traced else ())
                          for r in x["records"] if r["kind"] == "step"] for x in (doc, ref)]
                self.assertEqual(steps[0], steps[1])
                shutil.rmtree(os.path.join(self.tmp, "results"))

    def test_a_state_of_another_version_is_refused(self) -> None:
        d = os.path.join(self.tmp, "newer")
        os.makedirs(d)
        kvbtest.write_json(os.path.join(d, "state.json"),
                           {"schema": "kvb-bisect-state", "schema_version": 5})
        with open(os.path.join(d, "steps.jsonl"), "w"):
            pass
        p = subprocess.run([sys.executable, KVB, "bisect", "--resume", d], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is a kvb bisect state of schema_version 5; this kvb reads versions 1, "
                      "2, 3 and 4", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_bad_input_exits_2_with_a_message(self) -> None:
        repo = Repo(self.tmp, history(10, 13)[:3])
        c = repo.commits
        repo.git("branch", "side", c[1])
        repo.git("checkout", "-q", "side")
        with open(os.path.join(repo.path, "SIDE"), "w") as f:
            f.write("x\n")
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", "side")
        repo.git("checkout", "-q", "main")
        cases = [
            (["--old", c[0], "--new", c[2], "--max-rounds", "0"],
             "--max-rounds: must be at least 1"),
            (["--old", c[0], "--new", c[2], "--max-time", "soon"], "not a duration: 'soon'"),
            (["--old", c[0], "--new", c[2], "--max-time=-5m"], "not a duration"),
            (["--old", c[2], "--new", c[0]], "is newer than --new"),
            (["--old", "no-such-ref", "--new", c[0]], "--old 'no-such-ref' is not a commit"),
            (["--old", c[0], "--new", c[2], "--repeats", "3"], "--repeats must be at least 4"),
            (["--old", c[2], "--new", "side"], f"--old {c[2]} is not an ancestor of --new side"),
            (["--old", c[0], "--new", c[2], "--dep", "nosuchlib"], "exclude each other"),
            (["--old", c[0], "--new", c[2], "--witness", "instructions"],
             "--witness instructions: generic mode: kvb cannot count"),
            (["--old", c[0], "--new", c[2], "--witness", "sometimes"], "invalid choice"),
        ]
        resume = [(["--resume", self.tmp], "is not the results directory of a kvb bisect"),
                  (["--resume", self.tmp, "--old", c[0]], "leave out --old"),
                  (["--resume", self.tmp, "--all-steps"], "leave out --all-steps")]
        not_git = [(["--repo", self.tmp, "--old", "a", "--new", "b", "--build-cmd", "true",
                     "--measure-cmd", "true"], "is not a git repository"),
                   (["--repo", repo.path, "--old", c[0], "--new", c[2], "--dep", "nosuchlib",
                     "--bench", "readrandom"], "unknown dependency")]
        for extra, message in cases + resume + not_git:
            argv = self.args(repo, *extra) if (extra, message) in cases else \
                [sys.executable, KVB, "bisect", *extra]
            p = subprocess.run(argv, capture_output=True, text=True, env=repo.env)
            self.assertEqual(p.returncode, 2, f"{extra}: {p.stderr}")
            self.assertIn(message, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "results")))
        self.assert_clean(repo)

# ---- a change spread over two commits (issue 37 item 1) -----------------------------------------

SPREAD_COMMITS = 40
SPREAD_FIRST, SPREAD_SECOND = 8, 23
# Passes over the buffer (the work per run): 88/77 = 1.143x faster at commit 8, 88/64 = 1.375x
# at commit 23: log(1.143) / log(1.375) = 42% of the change at 8, 58% at 23.
SPREAD_PASSES = (88, 77, 64)
SPREAD_LIB = """#include <stddef.h>
#include <stdint.h>
/* commit %d */
const unsigned lib_salt = %du;
uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops) {
  uint64_t s = 0;
  for (int r = 0; r < %d; r++) {
    for (size_t i = 0; i < n; i++) s += (uint64_t)p[i] * (i | 1);
    *ops += n;
  }
  return s;
}
"""
# The benchmark above, its cost multiplied by this link's placement factor: +-3% (uniform), from
# the commit's salt and KVB_LAYOUT_SEED, as a relink with another section order would.
SPREAD_BENCH = BENCH.replace(
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);",
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);\n"
    "extern const unsigned lib_salt;").replace(
    "  ns *= speed * exp(sigma * z);",
    "  const char *layout = getenv(\"KVB_LAYOUT_SEED\");\n"
    "  uint64_t h = 0x9E3779B97F4A7C15ULL * (lib_salt * 7919ULL + "
    "(uint64_t)atol(layout ? layout : \"0\") + 1);\n"
    "  h ^= h >> 29; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 32;\n"
    "  ns *= 1 + 0.03 * (2.0 * (double)(h >> 11) / 9007199254740992.0 - 1);\n"
    "  ns *= speed * exp(sigma * z);")
ROUND_NOISE = "0.04,0,1,1"   # 4% log-normal round noise, no outliers


def spread_history() -> list[tuple[str, dict[str, str]]]:
    out = []
    for i in range(SPREAD_COMMITS):
        passes = SPREAD_PASSES[(i >= SPREAD_FIRST) + (i >= SPREAD_SECOND)]
        files = {"sum.c": SPREAD_LIB % (i, i + 1, passes)}
        if i == 0:
            files["bench.c"] = SPREAD_BENCH
        out.append((f"commit {i}", files))
    return out


class SpreadTest(BisectCase):
    """A change spread over two commits (42% and 58% of it), at the defaults: the commit where
    it crosses halfway is named with its share; --all-steps names both (ctest: bisect_spread)."""

    def spread(self, *extra: str) -> tuple[subprocess.CompletedProcess[str], Repo, dict]:
        repo = Repo(self.tmp, spread_history())
        c = repo.commits
        argv = self.args(repo, "--old", c[0], "--new", c[-1], "--find", "faster", *extra,
                         defaults=True)
        p = subprocess.run(argv, env=self.kvb_env(repo, ROUND_NOISE), capture_output=True,
                           text=True, timeout=1500)
        self.assertNotIn("Traceback", p.stderr)
        print(f"\n{p.stdout}", file=sys.stderr)
        doc = kvbtest.load_json(os.path.join(self.results_dirs()[-1], "bisect.json"))
        return p, repo, doc

    def test_the_commit_where_it_crosses_halfway_is_named_with_its_share(self) -> None:
        p, repo, doc = self.spread()
        c = repo.commits
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(doc["first_new"], c[SPREAD_SECOND], p.stdout)
        m = re.search(r"this commit explains (\d+)%; (\d+)% lies in OLD\.\.([0-9a-f]{12}), "
                      r"before it", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        assert m is not None
        self.assertTrue(50 <= int(m.group(1)) <= 66, p.stdout)
        self.assertEqual(m.group(3), c[SPREAD_SECOND - 1][:12])
        self.assertTrue(30 <= int(m.group(2)) <= 50, p.stdout)
        self.assertNotIn("could not decide", p.stdout)
        # Every judged commit says where it sits, and what decided it.
        steps = [x for x in p.stdout.splitlines() if re.match(r"\s*step \d+: \S+ like", x)
                 and "no build" not in x]
        self.assertTrue(steps)
        for x in steps:
            self.assertRegex(x, r"at -?\d+% of old -> new.*decided by time")
        self.assertRegex(p.stdout, r"\d+ link pairs, paired by round \(\d+(-\d+)? rounds? each\)")
        self.assertTrue(doc["confirmed"])

    def test_all_steps_names_both(self) -> None:
        p, repo, doc = self.spread("--all-steps")
        c = repo.commits
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        named = {x["commit"] for x in doc["culprits"] if x["confirmed"]}
        self.assertEqual(named, {c[SPREAD_FIRST], c[SPREAD_SECOND]}, p.stdout)
        self.assertIn("--all-steps: 2 step(s) found:", p.stdout)


# ---- several candidates a step (multisection, issue 44 item 2) ---------------------------------

MULTI_COMMITS, MULTI_CHANGE = 32, 21


def multi_history() -> list[tuple[str, dict[str, str]]]:
    """32 commits, each compiling sum.c anew (no verdict by compiled sources); #21 makes 30%
    more passes."""
    out = []
    for i in range(MULTI_COMMITS):
        files = {"sum.c": SPREAD_LIB % (i, i + 1, 10 if i < MULTI_CHANGE else 13)}
        if i == 0:
            files["bench.c"] = SPREAD_BENCH
        out.append((f"commit {i}", files))
    return out


def step_records(doc: dict) -> list[dict]:
    return [r for r in doc["records"] if r["kind"] in ("step", "multistep")]


class MultisectionTest(BisectCase):
    """k candidates a step cut the range into k + 1 parts: fewer steps, the same commit."""

    def test_k_candidates_a_step_name_the_same_commit_in_fewer_steps(self) -> None:
        repo = Repo(self.tmp, multi_history())
        c = repo.commits
        n = MULTI_COMMITS - 1            # the commits that may be the first new one
        ks = (1, 2, 3)
        # A count command that says which commits it counted: time decides every step here,
        # so only the confirmation counts (its commits, and old and new to see whether the
        # counts witness the change).
        logs = {k: os.path.join(self.tmp, f"counted-{k}.txt") for k in ks}
        done = self.bisects([(repo, CLEAN, ["--old", c[0], "--new", c[-1], "--repeats", "4",
                                            "--candidates", str(k), "--count-cmd",
                                            f"git rev-parse HEAD >> {logs[k]}; echo 1"], k)
                             for k in ks])
        for k, p in zip(ks, done):
            with self.subTest(k=k):
                self.assertLessEqual(set(self.read(logs[k]).split()),
                                     {c[0], c[-1], c[MULTI_CHANGE - 1], c[MULTI_CHANGE]})
                self.assertNotIn("the search goes on by time", p.stderr)  # no step asked
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"first new commit: {c[MULTI_CHANGE]}", p.stdout)
                d = [x for x in self.results_dirs()
                     if kvbtest.load_json(os.path.join(x, "state.json"))["candidates"] == k]
                doc = kvbtest.load_json(os.path.join(d[0], "bisect.json"))
                steps = step_records(doc)
                self.assertLessEqual(len(steps), math.ceil(math.log(n) / math.log(k + 1)),
                                     p.stdout)
                if k > 1:
                    self.assertLess(len(steps), math.ceil(math.log2(n)), p.stdout)
                    first = steps[0]
                    self.assertEqual((first["kind"], first["k"]), ("multistep", k))
                    self.assertEqual(sorted(first["values"]),
                                     [f"c{i}" for i in range(1, k + 1)] + ["new", "old"])
                    self.assertRegex(p.stdout, rf"step 1: {k} candidates, {k} measured with "
                                               r"old and new in the same rounds")
                    self.assertIn(f"{k} candidate(s) a step", p.stdout)   # the plan line
                self.assertRegex(p.stdout, rf"cost: .*; k={k}(, \d)*")
        self.assert_clean(repo)

    def test_a_step_of_several_is_replayed_by_resume(self) -> None:
        repo = Repo(self.tmp, multi_history())
        c = repo.commits
        p = self.bisect(repo, CLEAN, "--old", c[0], "--new", c[-1], "--repeats", "4",
                        "--candidates", "3")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        d = self.results_dirs()[0]
        lines = self.read(os.path.join(d, "steps.jsonl")).splitlines(keepends=True)
        kinds = [json.loads(x)["kind"] for x in lines]
        self.assertEqual(kinds[:2], ["endpoints", "multistep"])
        # As if interrupted after the first step: the rest runs again, that step does not.
        kept = lines[:2]
        output = os.path.join(d, "steps.jsonl")
        with open(output, "w") as f:
            f.writelines(kept)
        runs_before = self.measured()
        p = subprocess.run([sys.executable, KVB, "bisect", "--resume", d, "--no-store"],
                           capture_output=True, text=True, env=self.kvb_env(repo, CLEAN),
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"first new commit: {c[MULTI_CHANGE]}", p.stdout)
        after = self.read(output).splitlines(keepends=True)
        self.assertEqual(after[:2], kept)
        added = sum(len(v) for x in after[2:] for v in json.loads(x).get("values", {}).values())
        self.assertEqual(self.measured() - runs_before, added)
        # The replayed step's verdicts narrowed the range: the next step tests what they left.
        first = json.loads(kept[1])
        news = [x["commit"] for x in first["candidates"] if x["verdict"] == "new"]
        olds = [x["commit"] for x in first["candidates"] if x["verdict"] == "old"]
        nxt = json.loads(after[2])
        tested = [x["commit"] for x in nxt.get("candidates", [nxt])]
        for sha in tested:
            self.assertLess(c.index(sha), min(c.index(x) for x in news))
            self.assertGreater(c.index(sha), max(c.index(x) for x in olds))


class CostModelTest(unittest.TestCase):
    """How many candidates a step measures (sections.py's cost model)."""

    def test_k_follows_what_builds_and_rounds_cost(self) -> None:
        one, cores = (lambda k: 1), (lambda k: min(k, 8))
        # Builds one at a time and dearer than the measuring: git bisect's one.
        self.assertEqual(sections.choose(1000, 300.0, 30.0, one), 1)
        # Builds side by side on 8 cores and dear: as many as fit.
        self.assertEqual(sections.choose(1000, 300.0, 30.0, cores), 8)
        # Measuring only: old and new are shared by the candidates of a round.
        self.assertIn(sections.choose(1000, 0.0, 60.0, one), (2, 3))
        # Never more candidates than commits left to test.
        self.assertEqual(sections.choose(3, 0.0, 60.0, cores), 2)
        self.assertEqual(sections.choose(2, 0.0, 60.0, cores), 1)
        # The formula: S(k) = ln n / ln(k + 1) steps of ceil(k / s) builds and (k + 2) / 3 of a
        # step's measuring.
        self.assertAlmostEqual(sections.steps_needed(3, 64), 3.0)
        self.assertAlmostEqual(sections.step_cost(3, 10.0, 30.0, 2), 2 * 10.0 + 5 / 3 * 30.0)
        # Builds side by side are priced as measured: rocksdb's on 2 cores, 228 s alone and
        # 460 s two at once (compile-bound: nothing gained), make one candidate a step the
        # cheaper; before a side-by-side build was timed, two look free (issue 44's run).
        two = (lambda k: min(k, 2))
        self.assertEqual(sections.choose(75, 228.0, 65.0, two), 2)
        self.assertEqual(sections.choose(75, 228.0, 65.0, two, waves={2: 460.0}), 1)
        # lz4's, link- and configure-bound, 8 s alone and 9 s two at once: two a step.
        self.assertEqual(sections.choose(40, 8.0, 15.0, two, waves={2: 9.0}), 2)
        self.assertAlmostEqual(sections.step_cost(3, 10.0, 30.0, 2, 25.0),
                               2 * 25.0 + 5 / 3 * 30.0)

    def test_a_step_of_several_reads_back_as_written(self) -> None:
        r = bisect_records
        m = r.Measured({"old": [1.0, 1.1], "new": [2.0, 2.1], "c1": [1.0, 1.0],
                        "c2": [2.0, 2.0]}, {k: [0, 0] for k in ("old", "new", "c1", "c2")},
                       {k: [1, 2] for k in ("old", "new", "c1", "c2")})
        view = m.view({"old": "old", "new": "new", "this": "c2"})
        one = r.Step(4, "a" * 40, "f1", "old", r.MEASURED, series=r.StepSeries(
            2, "settled", False, 1.0, m.view({"old": "old", "new": "new", "this": "c1"}),
            [1.0, 0.9, 1.1], [0.5, 0.4, 0.6], [2.0, 1.9, 2.1], 0.0, "2 paired rounds",
            "intervals"))
        two = r.Step(4, "b" * 40, "f2", "new", r.MEASURED, series=r.StepSeries(
            2, "settled", False, 1.0, view, [2.0, 1.9, 2.1], [1.0, 0.9, 1.1], [2.0, 1.9, 2.1],
            1.0, "2 paired rounds", "intervals"), note="why not counted")
        same = r.Step(4, "c" * 40, "f1", "old", r.SAME_SOURCES, same_as="a" * 40)
        rec = r.MultiStep(4, [one, two, same], ["c1", "c2", ""], r.StepSeries(
            2, "settled", False, 1.0, m, None, None, [2.0, 1.9, 2.1], math.nan,
            "2 paired rounds"))
        back = r.from_json(json.loads(json.dumps(rec.to_json())), "steps.jsonl")
        self.assertEqual(back.to_json(), rec.to_json())
        assert isinstance(back, r.MultiStep)
        self.assertEqual(back.steps[1].series.measured.values["this"], [2.0, 2.0])
        self.assertEqual(back.steps[1].note, "why not counted")
        self.assertEqual(back.roles("o", "n"), {"old": "o", "new": "n", "c1": "a" * 40,
                                                "c2": "b" * 40})
        self.assertEqual(back.variants, 4)
        self.assertNotIn("nodes", back.to_json())   # measured here
        self.assertEqual(back.paced, 4)             # a round of old, new and two candidates
        # On a cluster: each candidate on a node of its own; a node's round is of three.
        rec.nodes = {"c1": ["node1"], "c2": ["node2"]}
        back = r.from_json(json.loads(json.dumps(rec.to_json())), "steps.jsonl")
        assert isinstance(back, r.MultiStep)
        self.assertEqual((back.nodes, back.paced), ({"c1": ["node1"], "c2": ["node2"]}, 3))
        self.assertIn("c1 on node1, c2 on node2", bisect_steps.multi_lines(back)[0])
        # The lines name what the series measured: time, or the instructions a bisect with
        # --instructions counts itself (issue 44's rocksdb bisect printed "time:" for them).
        timed = bisect_steps.multi_lines(back)
        counted = bisect_steps.multi_lines(
            back, metrics.series_word("callgrind.instructions_per_op"))
        self.assertIn("; time: this/old", timed[1])
        self.assertTrue(timed[1].endswith("decided by time"), timed[1])
        self.assertIn("; instructions: this/old", counted[1])
        self.assertNotIn("time", counted[1])
        self.assertTrue(counted[1].endswith("decided by instructions"), counted[1])
        self.assertEqual([metrics.series_word(m) for m in (
            "bytes_per_second", "instructions_per_byte", "ops_per_sec", None)],
            ["time", "instructions", "time", "time"])

    def test_on_a_cluster_k_is_the_measurement_nodes_up(self) -> None:
        # --candidates auto with --slurm: a candidate a measurement node up (issue 45 item 4),
        # whatever the builds cost; at most the commits left but one; --candidates K wins.
        def search(nodes: list[str], asked: int = 0) -> types.SimpleNamespace:
            fleet = types.SimpleNamespace(hosts=lambda arch: list(nodes),
                                          config=types.SimpleNamespace(partition="measure"))
            return types.SimpleNamespace(s=types.SimpleNamespace(candidates=asked),
                                         fleet=fleet, node_arch=lambda: "x86_64")
        k, how = sections.how_many(search(["node1", "node2"]), 31)
        self.assertEqual((k, how), (2, "k=2: 2 measurement node(s) of measure up (node1, "
                                       "node2), a candidate each"))
        self.assertEqual(sections.how_many(search([f"n{i}" for i in range(16)]), 1000)[0], 16)
        self.assertEqual(sections.how_many(search([f"n{i}" for i in range(16)]), 5)[0], 4)
        self.assertEqual(sections.how_many(search(["node1"]), 31)[0], 1)
        self.assertEqual(sections.how_many(search(["node1", "node2"], asked=3), 31)[0], 3)

    def test_a_candidate_is_judged_on_the_rounds_that_measured_it(self) -> None:
        # A step of two on a cluster: old, new and c1 in rounds 1-2 (node1), old, new and c2
        # in rounds 3-4 (node2, where everything runs 1.5x slower).
        m = bisect_records.Measured(
            {"old": [1.0, 1.0, 1.5, 1.5], "new": [2.0, 2.0, 3.0, 3.0], "c1": [1.0, 1.0],
             "c2": [3.0, 3.0]}, {k: [0] * n for k, n in (("old", 4), ("new", 4), ("c1", 2),
                                                         ("c2", 2))},
            {"old": [1, 2, 3, 4], "new": [1, 2, 3, 4], "c1": [1, 2], "c2": [3, 4]})
        v = m.view({"old": "old", "new": "new", "this": "c2"})
        self.assertEqual(v.values, {"old": [1.5, 1.5], "new": [3.0, 3.0], "this": [3.0, 3.0]})
        self.assertEqual(v.rounds, {"old": [3, 4], "new": [3, 4], "this": [3, 4]})
        self.assertEqual(m.view({"old": "old", "this": "c1"}).values["old"], [1.0, 1.0])


# ---- when time and instructions disagree (issue 44 item 5) ------------------------------------

# lib_cost is the time one byte pass costs in the benchmark's cost model: data, not code, so a
# commit that changes it changes the time and not one instruction; PASSES is code.
WITNESS_LIB = """#include <stddef.h>
#include <stdint.h>
/* commit %d */
const double lib_cost = %.6f;
uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops) {
  uint64_t s = 0;
  for (int r = 0; r < %d; r++) {
    for (size_t i = 0; i < n; i++) s += (uint64_t)p[i] * (i | 1);
    *ops += n;
  }
  return s;
}
"""
WITNESS_BENCH = BENCH.replace(
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);",
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);\n"
    "extern const double lib_cost;").replace("double ns = ops * 0.25;",
                                             "double ns = ops * 0.25 * lib_cost;")
# The count: callgrind's total over the benchmark built in the worktree, without the test's
# noise and run log (which change what the benchmark executes from run to run).
COUNT = ("cc -O0 -o bench-count bench.c sum.c -lm && env -u KVB_TEST_RUNS -u KVB_TEST_NOISE "
         "valgrind --tool=callgrind --callgrind-out-file=/dev/null ./bench-count 2>&1 "
         ">/dev/null | sed -n 's/.*Collected : //p'")
WITNESS_COMMITS = 16


def witness_history(agree: bool) -> list[tuple[str, dict[str, str]]]:
    """16 commits. agree=False: #3 and #5 each make a byte pass 14% quicker (time only, 43%
    of old -> new in time each), #11 makes 25% fewer passes and costs 5% less time (100% of
    the change in instructions, 15% in time). agree=True: #5 and #11 cut the passes (200, 170,
    150), time and instructions alike (56% and 44% of the change)."""
    out = []
    for i in range(WITNESS_COMMITS):
        if agree:
            cost, passes = 1.0, 150 if i >= 11 else 170 if i >= 5 else 200
        else:
            cost = (0.86 if i >= 3 else 1) * (0.86 if i >= 5 else 1) * \
                (0.95 / 0.75 if i >= 11 else 1)
            passes = 150 if i >= 11 else 200
        files = {"sum.c": WITNESS_LIB % (i, cost, passes)}
        if i == 0:
            files["bench.c"] = WITNESS_BENCH
        out.append((f"commit {i}", files))
    return out


class WitnessTest(BisectCase):
    """--witness auto with a real instruction count (--count-cmd, callgrind): the counts decide
    a step time could not only where they witness the change time measured."""

    def setUp(self) -> None:
        super().setUp()
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind is not installed")

    def run_both(self, agree: bool, noise: str
                 ) -> list[tuple[int, subprocess.CompletedProcess[str]]]:
        """k = 1 and 3, with `noise` and no budget beyond the first rounds, so that time
        cannot place a commit near halfway by itself."""
        repo = Repo(os.path.join(self.tmp, f"agree-{agree}"), witness_history(agree))
        c = repo.commits
        common = ["--old", c[0], "--new", c[-1], "--find", "faster", "--count-cmd", COUNT,
                  "--max-time", "0.01s"]
        ks = (1, 3)
        done = self.bisects([(repo, noise, [*common, "--candidates", str(k)], 1) for k in ks])
        self.repo = repo
        return list(zip(ks, done))

    def test_instructions_that_do_not_witness_the_change_in_time_decide_nothing(self) -> None:
        for k, p in self.run_both(False, "0.03,0,1,1"):
            with self.subTest(k=k):
                c = self.repo.commits
                # The time culprit, by time, confirmed: never a commit between it and the
                # instruction culprit (#11), whose counts equal their parents' from #6 to #10.
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"first new commit: {c[5]}", p.stdout)
                self.assertRegex(p.stdout, r"instructions are not a witness of this change: "
                                           r"[0-9a-f]{12} is at \d+% by time \(?.*and 0% by "
                                           r"instructions")
                self.assertIn("in instructions it explains 0% of old -> new; 0% lies before "
                              "it, 100% after it", p.stdout)
                self.assertNotIn("decided by instructions", p.stdout)
                self.assertNotIn("code-placement effect", p.stdout)
                self.assertRegex(p.stdout, r"\nconfirmed\n")
                # The other witness's culprit: the bisect the report prints names #11.
                m = re.search(r"the bisect that names it: (.*)\n", p.stdout)
                assert m is not None, p.stdout
                if k == 1:
                    argv = shlex.split(m.group(1)) + [
                        "--layouts", "1", "--results-dir", os.path.join(self.tmp, "by-counts"),
                        "--no-store"]
                    argv[0] = KVB
                    q = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                                       env=self.kvb_env(self.repo, "0.03,0,1,1"), timeout=300)
                    self.assertIn(f"first new commit: {c[11]}", q.stdout, q.stdout + q.stderr)

    def test_instructions_that_witness_it_decide_what_time_could_not(self) -> None:
        for k, p in self.run_both(True, "0.05,0,1,1"):
            with self.subTest(k=k):
                c = self.repo.commits
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"first new commit: {c[5]}", p.stdout)
                # A commit measured by time, undecided, then counted: the counts decided it.
                self.assertRegex(p.stdout, r"step \d+: [0-9a-f]{12} like \w+, at \d+% of old "
                                           r"-> new; time: .*; instructions: .*; decided by "
                                           r"instructions")
                self.assertNotIn("not a witness", p.stdout)


class SeriesTest(unittest.TestCase):
    """A bisect series on the engine (measure/loop.py, executor.LocalExecutor, pinning.Watch and
    bisect/series.Values) with a fake runner and builder: where the rounds go, and a disturbed
    round."""

    def series(self, value, *, canary=None, relink=0.01, links=4, max_rounds=60,
               settled=lambda m: False) -> tuple[loop.Outcome, bisect_records.Measured]:
        got: dict[str, float] = {}
        made: dict[str, int] = {"old": links, "new": links}
        calls = {"n": 0, "clock": 0.0}

        class Runner:
            def round(self, plan: Plan, r: int, seed: int) -> list[Measurement]:
                out = []
                for v in plan.order(r):
                    calls["n"] += 1
                    path = f"/nonexistent/{plan.name}.{v.build}.r{r}.json"
                    got[path] = value(v.build, seed, calls["n"])
                    out.append(Measurement(path, v.label, v.build, seed, r, (0,)))
                return out

        guess = relink

        class Builder:
            batch = 1

            def __init__(self) -> None:
                self.guess = guess

            def links(self, build: str) -> int:
                return made[build]

            def relink(self, build: str, k: int) -> int:
                n, made[build] = k - made[build], k
                return n

        def clock() -> float:   # every reading fresh (none reused as the next round's before)
            calls["clock"] += 10.0
            return calls["clock"]

        watch = pinning.Watch(pinning.Pin((0,), "canary" if canary else "", ""),
                              read=lambda b, c: pinning.Reading(c, canary()), clock=clock)
        plan = Plan("step 1", (Variant("old", "old"), Variant("new", "new")), links,
                    Budget(2 * links, max_rounds, 1e9), watch.pin)

        def rows(m: bisect_records.Measured) -> list:
            v = m.levels()
            c = levels.components(v["old"], v["new"])
            return [c] if c else []
        values = bisect_series.Values({"old": "old", "new": "new"},
                                      lambda path, label: [got[path]], settled, rows)
        out = loop.Loop(plan, LocalExecutor(Runner(), watch), Builder(), values,
                        lambda msg: None).run()
        return out, values.measured()

    def test_links_are_added_where_the_variance_is_between_links(self) -> None:
        rng = __import__("random").Random(4)
        place = {(c, k): 1 + rng.uniform(-0.1, 0.1) for c in ("old", "new") for k in range(99)}
        out, m = self.series(lambda sha, seed, n: place[(sha, seed)] * (1 + 0.002 * (n % 3)))
        self.assertGreater(m.links, 4)
        self.assertEqual(out.spent.links, m.links)
        # Noise within links and none between them: rounds, never a link.
        out, m = self.series(lambda sha, seed, n: 1 + 0.05 * rng.gauss(0, 1), relink=100.0)
        self.assertEqual(out.spent.links, 4)
        self.assertEqual(out.spent.rounds, 60)

    def test_a_disturbed_round_is_named_set_apart_and_repeated(self) -> None:
        readings = {"n": 0}

        def canary() -> float:   # before and after every round: the 5th is before round 3
            readings["n"] += 1
            return 150.0 if readings["n"] == 5 else 100.0 + readings["n"] % 2

        out, m = self.series(lambda sha, seed, n: 1.0 + 0.01 * (n % 5), canary=canary,
                             settled=lambda m: True)
        self.assertEqual(m.disturbed, [3])
        self.assertRegex(out.set_apart[3], r"^round 3: the canary before it took 1\.\d\dx its "
                                           r"median time in this comparison \(slower\)")
        self.assertEqual(out.spent.rounds, 9)          # 8 rounds and round 3 again
        self.assertEqual(m.seed_of("old")[2], m.seed_of("old")[3])   # on the same link
        self.assertEqual(len(m.levels()["old"].values), 8)           # set apart


class StateTest(unittest.TestCase):
    """state.json as --resume reads it back (the generic mode's is run end to end above)."""

    def test_a_kvbench_mode_state_reads_back_as_written(self) -> None:
        s = bisect_state
        state = s.State(s.Settings("/src/rocksdb", "a" * 40, "b" * 40, "faster",
                                   Judgement(0.03, 0.01), arguments.budget(6, 4, 600.0), 3,
                                   False, "p99"),
                        s.KvbenchMode("rocksdb", "x86-gcc-native", "rocksdb",
                                      Workload(micro=False, engines=["rocksdb"],
                                           workloads="readrandom", num=1000),
                                      "rocksdb readrandom"))
        self.assertEqual(state.settings.budget.max_rounds, 6)   # never below --repeats
        for watched in (None, s.Watched("latency_ns.p99", "ns", "lower", "kvbench",
                                        "rocksdb readrandom")):
            state.watched = watched
            state.totals.runs += 4
            doc = json.loads(json.dumps(state.to_json()))
            self.assertEqual(s.from_json(doc, "state.json"), state)
        # The direction and words are the watched metric's: a lower latency is faster.
        self.assertFalse(doc["judgement"]["higher_is_better"])
        self.assertEqual(doc["metric"], "latency_ns.p99")
        for bad, message in (({"schema": "kvb-bisect-state", "schema_version": 7},
                              "schema_version 7; this kvb reads versions 1, 2, 3 and 4"),
                             ({"schema": "kvb-bisect"}, "is not a kvb bisect state"),
                             (dict(doc, judgement={}), "cannot read the bisect's state")):
            with self.assertRaises(UsageError) as e:
                s.from_json(bad, "DIR/state.json")
            self.assertIn(message, str(e.exception))


class SlotTest(kvbtest.TempDirTest):
    """A kvbench-mode step builds in a slot configured once (measure/bisect/slots.py): a later
    step configures kvbench again only when the library's version changed or more links are
    wanted than the tree has targets for, and builds only the binary measured (the library's
    own build and its compile counts: source_deps_test.py's LiveInTree, the lz4 runs:
    docs/evidence/bisect-lz4.md)."""

    def slot(self, micro: bool = True, links: int = 4) -> bisect_slots.Slot:
        mode = bisect_state.KvbenchMode("lz4", "x86-gcc-native", "", Workload(micro=micro),
                                        "lz4/compress/4096")
        return bisect_slots.Slot(self.tmp, "x86-gcc-native-0", mode, "x86-gcc-native", links,
                                 os.path.join(self.tmp, "build.log"))

    def version(self, slot: bisect_slots.Slot, v: str) -> None:
        major, minor, release = v.split(".")
        os.makedirs(os.path.join(slot.src, "lib"), exist_ok=True)
        with open(os.path.join(slot.src, "lib", "lz4.h"), "w") as f:
            f.write(f"#define LZ4_VERSION_MAJOR {major}\n#define LZ4_VERSION_MINOR {minor}\n"
                    f"#define LZ4_VERSION_RELEASE {release}\n")

    def test_a_later_step_does_not_configure_again(self) -> None:
        slot = self.slot()
        self.version(slot, "1.9.3")
        self.assertEqual(slot.why_configure(range(4)), "the slot's first build")
        # After the first build: configured with 16 seeds' targets, the library kept live.
        slot.seeds, slot.version = bisect_slots.SEEDS, "1.9.3"
        os.makedirs(os.path.join(slot.src, ".kvbench-live"))
        self.assertIn("not kept up to date", slot.why_configure(range(4)))
        open(os.path.join(slot.src, ".kvbench-live", "kvbench-live.stamp"), "w").close()
        self.assertEqual(slot.why_configure(range(4)), "")          # a step
        self.assertEqual(slot.why_configure(range(12, 16)), "")     # a relink within the targets
        self.assertEqual(slot.why_configure(range(16, 20)), "link targets for seeds up to 19")
        self.version(slot, "1.9.4")
        self.assertEqual(slot.why_configure(range(4)), "lz4 1.9.3 -> 1.9.4")
        slot.failed()
        self.assertEqual(slot.why_configure(range(4)), "the slot's first build")

    def test_a_step_builds_only_the_binary_it_measures(self) -> None:
        self.assertEqual(self.slot().targets(range(4, 8)),
                         [f"kvbench_micro-layout{s}" for s in range(4, 8)])
        self.assertEqual(self.slot(micro=False).targets(range(0, 2)),
                         ["kvbench-layout0", "kvbench-layout1"])
        self.assertEqual(self.slot(links=1).targets(range(1)), ["kvbench_micro"])
        b = self.slot(micro=False)._tree(16)
        self.assertEqual(b.defines["KVBENCH_BUILD_MICRO"], "OFF")
        self.assertEqual(b.defines["KVBENCH_DEPS_LIVE"], "ON")
        self.assertIn("-DKVBENCH_LAYOUT_SEEDS=" + ";".join(map(str, range(16))),
                      b.configure_cmd())


class CanaryTest(kvbtest.TempDirTest):
    """A kvbench-mode bisect reads its canary from the binary it measures (the first built
    commit's kvbench_micro or kvbench), so it needs no build of this tree."""
    TMP_PREFIX = "kvb-bisect-canary-test."

    def ranges(self) -> bisect_ranges.Ranges:
        s = bisect_state
        plan = Workload(micro=True, micro_filter="^lz4/compress/4096$")
        state = s.State(s.Settings(self.tmp, "a" * 40, "b" * 40, "slower",
                                   Judgement(0.05, 0.05), arguments.budget(4, 8, 60.0), 1, False,
                                   None),
                        s.KvbenchMode("lz4", "x86-gcc-native", "", plan, "lz4/compress/4096"))
        r = bisect_ranges.Ranges(state, [])
        self.addCleanup(shutil.rmtree, r.ws.tmp, True)
        return r

    def micro(self) -> str:
        """A stand-in for a commit's kvbench_micro: `--canary --cpu_affinity=N` as it prints."""
        path = os.path.join(self.tmp, "kvbench_micro")
        with open(path, "w") as f:
            f.write('#!/bin/sh\n[ "$1" = --canary ] || exit 2\n'
                    'cpu=${2#--cpu_affinity=}\n'
                    'echo "{\\"canary\\": \\"kvbench reference loop\\", \\"cpu\\": $cpu, '
                    '\\"ns_per_loop\\": 1.6, \\"wall_ns_per_loop\\": 1.7}"\n')
        os.chmod(path, 0o755)
        return path

    def test_the_canary_is_the_binary_measured_not_this_trees_build(self) -> None:
        saved = bisect_series.ROOT      # series.choose_pin: the bisect's candidates
        bisect_series.ROOT = self.tmp   # no build/<native preset>/src/kvbench there
        self.addCleanup(setattr, bisect_series, "ROOT", saved)
        r = self.ranges()
        # Nothing built yet and no build of this tree: pinned, without a canary, saying why.
        text = r.pin().text
        self.assertIn("no canary (", text)
        self.assertIn(f"no kvbench build at {self.tmp}/build/", text)
        self.assertEqual(r.watch.binary, "")
        # Once a commit is built, its binary is the canary (pinning.Watch, around every round).
        micro = self.micro()
        r.ws.binaries["a" * 40] = [micro]
        pin = r.pin()
        self.assertRegex(pin.text, rf"^every run on CPU \d+ \(.*\); a canary \("
                                   rf"{re.escape(micro)} --canary\) on it before every round and "
                                   r"after the last$")
        self.assertEqual(r.watch.binary, micro)
        got = r.watch.read_one(micro, pin.cpus[0])
        self.assertEqual(got.value(pin.by_wall) if got else None, 1.6)   # micro: best window


def rounds(values: list[float]) -> levels.Sample:
    """One value a round, rounds 1..n, one link: a series' values as bisect_judge takes them."""
    return levels.Sample.rounds(values, list(range(1, len(values) + 1)))


class JudgeTest(unittest.TestCase):
    """The three judgements on fixed samples, paired by round."""

    def test_a_commit_is_like_old_like_new_or_uncertain(self) -> None:
        old = rounds([100, 101, 99, 100.5, 99.5])
        new = rounds([80, 81, 79, 80.5, 79.5])
        self.assertEqual(judge.classify(old, new, rounds([100.2, 99.8, 100.1, 99.9, 100])
                                        ).verdict, judge.OLD)
        self.assertEqual(judge.classify(old, new, rounds([80.2, 79.8, 80.1, 79.9, 80])).verdict,
                         judge.NEW)
        noisy = judge.classify(old, new, rounds([100, 70, 95, 82, 60]), final=True)
        self.assertEqual(noisy.verdict, judge.UNCERTAIN)
        self.assertFalse(noisy.narrow)        # more rounds may tell

    def test_a_commit_between_old_and_new_is_judged_by_the_halfway_rule(self) -> None:
        # 42% of the way (in log ratio), its intervals narrow against the change but reaching
        # past halfway: uncertain while the budget lasts, then like old by its estimate.
        old = rounds([100, 101, 99, 100.5, 99.5, 100.2])
        new = [x / 1.375 for x in old.values]
        wobble = [1.0, 1.06, 0.95, 1.04, 0.97, 1.0]
        this = rounds([x / 1.375 ** 0.42 * w for x, w in zip(old.values, wobble)])
        call = judge.classify(old, rounds(new), this)
        self.assertEqual(call.verdict, judge.UNCERTAIN)
        self.assertTrue(call.narrow)
        final = judge.classify(old, rounds(new), this, final=True)
        self.assertEqual((final.verdict, final.rule), (judge.OLD, judge.HALFWAY))
        self.assertAlmostEqual(final.position, 0.42, delta=0.1)
        later = rounds([x / 1.375 ** 0.58 * w for x, w in zip(old.values, wobble)])
        self.assertEqual(judge.classify(old, rounds(new), later, final=True).verdict, judge.NEW)

    def test_exact_counts_decide_at_once(self) -> None:
        one = levels.Sample.processes
        call = judge.classify(one([16.37]), one([12.85]), one([12.85]), exact=True)
        self.assertEqual((call.verdict, call.rule), (judge.NEW, judge.CLEAR))
        self.assertEqual(call.unit, "exact values")

    def test_the_change_must_clear_the_threshold(self) -> None:
        old = rounds([100, 101, 99, 100.5, 99.5, 100.2])
        slow = judge.want_sign("slower", higher_is_better=True)
        for values, state in (([80, 81, 79, 80.5, 79.5, 80.1], judge.ESTABLISHED),
                              ([120, 121, 119, 120.5, 119.5, 120], judge.OPPOSITE),
                              ([99, 100, 98, 99.5, 98.5, 99.2], judge.SAME),
                              ([96, 90, 99, 93, 101, 92], judge.UNDECIDED)):
            c = judge.check_change(old, rounds(values), sign=slow, threshold=0.05)
            self.assertEqual(c.state, state, values)
            self.assertEqual(c.unit, "6 paired rounds")
        # Lower is better (a time): slower is a rise.
        self.assertEqual(judge.want_sign("slower", higher_is_better=False), 1)

    def test_confirmation_needs_significance_and_the_threshold_not_half(self) -> None:
        parent = [100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1]
        old = rounds(parent)
        new = rounds([x * 0.7 for x in parent])
        sign = judge.want_sign("slower", higher_is_better=True)
        c = judge.confirm(old, rounds([x * 0.7 for x in parent]), old, new, sign=sign,
                          alpha=0.05, threshold=0.05, same_sources=False)
        self.assertTrue(c.confirmed, c.reasons)
        self.assertAlmostEqual(c.explained, 1.0, places=2)
        # A commit that carries 30% of the change is confirmed, its share reported.
        part = judge.confirm(old, rounds([x * 0.9 for x in parent]), old, new, sign=sign,
                             alpha=0.05, threshold=0.05, same_sources=False)
        self.assertTrue(part.confirmed, part.reasons)
        self.assertAlmostEqual(part.explained, 0.295, delta=0.01)
        small = judge.confirm(old, rounds([x * 0.98 for x in parent]), old, new, sign=sign,
                              alpha=0.05, threshold=0.05, same_sources=False)
        self.assertIn("less than the 5% threshold", small.reasons[0])
        same = judge.confirm(old, rounds([x * 0.7 for x in parent]), old, new, sign=sign,
                             alpha=0.05, threshold=0.05, same_sources=True)
        self.assertFalse(same.confirmed)
        self.assertIn("it changes nothing the build compiles", same.reasons[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
