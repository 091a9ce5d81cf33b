#!/usr/bin/env python3
"""Makes the fixtures of this directory: kvb bisects interrupted with SIGINT under an older kvb,
whose state.json bisect_test.py's resume test converts (not run by ctest).

  make_fixture.py --src OLD_TREE [--out DIR]   (e.g. git worktree add /tmp/old b8ff310;
                                               tests/data/bisect_v2: --out ../bisect_v2 with
                                               a tree of 54a7234, state.json schema 2;
                                               tests/data/bisect_v3: --out ../bisect_v3 with
                                               a tree of 02e24f1, schema 3)

Each fixture is the state.json and steps.jsonl the older kvb left, copied as they are, of a
generic-mode bisect of bisect_test.py's history(10, 13) (its commits have fixed dates, so their
ids are the same wherever the history is generated; the test swaps in its repository's path):

after_endpoints: --repeats 4 --layouts 1, interrupted once the endpoints are recorded.
after_step:      the default --layouts (3 in v1 and v2, 4 in v3), interrupted in the confirmation,
                 after three steps.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import bisect_test as bt  # noqa: E402


def lines(path: str) -> list[dict]:
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.endswith("\n")]
    except (OSError, json.JSONDecodeError):
        return []


def make(name: str, src: str, extra: list[str], steps_done: int, out_dir: str = HERE) -> None:
    work = tempfile.mkdtemp(prefix="kvb-bisect-v1.")
    repo = bt.Repo(work, bt.history(10, 13))
    c = repo.commits
    results = os.path.join(work, "results")
    env = dict(repo.env, KVB_TEST_NOISE=bt.CLEAN, KVB_TEST_SEED="1",
               KVB_TEST_RUNS=os.path.join(work, "runs.txt"), KVB_TEST_SLEEP_MS="40")
    p = subprocess.Popen([sys.executable, os.path.join(src, "scripts", "kvb"), "bisect",
                          "--repo", repo.path, "--build-cmd", bt.BUILD, "--measure-cmd",
                          "./bench", "--results-dir", results, "--no-store", "--old", c[0],
                          "--new", c[bt.LAST], *extra], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    steps = ""
    while p.poll() is None:
        dirs = os.listdir(results) if os.path.isdir(results) else []
        steps = os.path.join(results, dirs[0], "steps.jsonl") if dirs else ""
        recs = lines(steps) if steps else []
        if recs and sum(r["kind"] == "step" for r in recs) >= steps_done:
            os.killpg(p.pid, signal.SIGINT)
            break
        time.sleep(0.005)
    out, err = p.communicate(timeout=120)
    if p.returncode != 130:
        sys.exit(f"{name}: exit {p.returncode}, not interrupted:\n{out}{err}")
    dest = os.path.join(out_dir, name)
    os.makedirs(dest, exist_ok=True)
    for f in ("state.json", "steps.jsonl"):
        shutil.copy(os.path.join(os.path.dirname(steps), f), dest)
    print(f"{name}: {[(r['kind'], r.get('verdict')) for r in lines(steps)]}")
    shutil.rmtree(work)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="a source tree of the older kvb")
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: here)")
    args = ap.parse_args()
    make("after_endpoints", args.src, ["--repeats", "4", "--layouts", "1"], 0, args.out)
    make("after_step", args.src, [], 3, args.out)


if __name__ == "__main__":
    main()
