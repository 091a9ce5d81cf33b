"""kvb crashtest's trials: a fill with --ack_file killed with SIGKILL at a random moment after its
first acknowledged write, then verifyacked on the same database; each trial's outcome, and the
tally per engine (docs/workloads.md, crash consistency). commands/crashtest.py is the command."""
from __future__ import annotations

import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from kvbtools.core import results
from kvbtools.core.errors import UsageError

# The ack file (src/workload/ack_log.h): a 64-byte header, then one 64-byte slot per thread whose
# first 8 bytes are its count of acknowledged writes. Host byte order.
ACK_HEADER = struct.Struct("=8sIIQQIIIId8x")
ACK_MAGIC = b"KVBACK\0\0"
ACK_SLOT = 64
# How long a fill may take to acknowledge its first write, and a verification to finish.
START_TIMEOUT = 60.0
VERIFY_TIMEOUT = 600.0


@dataclass(frozen=True)
class TrialConfig:
    """What every trial runs, and what is kept and said."""
    kvbench: str
    benchmark: str         # the fill: fillrandom or fillseq
    num: int
    threads: int
    sync: bool             # --sync: an acknowledged write must survive; else losses are reported
    seed: int              # seeds the kill moments and each trial's kvbench --seed
    trials: int            # per engine
    kill_after: tuple[float, float]   # seconds after the first acknowledged write, drawn uniformly
    dir: str | None        # where the databases go (None: a temporary directory)
    keep: bool             # keep the databases of trials that passed too
    quiet: bool            # no line per trial on stderr


@dataclass
class Trial:
    engine: str
    trial: int
    seed: int
    kill_after: float
    killed: bool = False          # False: the fill ended on its own before the kill
    fill_exit: Optional[int] = None
    acknowledged: int = 0         # the ack file's count after the kill
    checked: int = 0              # acknowledged writes verifyacked read back
    lost: int = 0
    outcome: str = "ok"           # ok | lost | reopen_failed | corrupt | error
    message: str = ""
    dir: str = ""                 # kept when the trial did not pass, or with --keep


@dataclass
class Tally:
    engine: str
    trials: int = 0
    killed: int = 0
    checked: int = 0
    lost: int = 0
    trials_with_loss: int = 0
    reopen_failures: int = 0
    corruptions: int = 0
    errors: int = 0
    messages: list[str] = field(default_factory=list)

    def add(self, t: Trial) -> None:
        self.trials += 1
        self.killed += t.killed
        self.checked += t.checked
        self.lost += t.lost
        self.trials_with_loss += t.lost > 0
        self.reopen_failures += t.outcome == "reopen_failed"
        self.corruptions += t.outcome == "corrupt"
        self.errors += t.outcome == "error"
        if t.message:
            self.messages.append(f"trial {t.trial}: {t.message}")

    def failed(self, sync: bool) -> bool:
        return (sync and self.lost > 0) or self.reopen_failures + self.corruptions + \
            self.errors > 0


def read_ack_counts(path: str) -> list[int]:
    """Each thread's count of acknowledged writes in an ack file."""
    with open(path, "rb") as f:
        data = f.read()
    magic, _version, _kind, _num, _seed, threads = ACK_HEADER.unpack_from(data)[:6]
    if magic != ACK_MAGIC or len(data) != ACK_HEADER.size + ACK_SLOT * threads:
        raise ValueError(f"{path} is not a whole ack file")
    return [struct.unpack_from("=Q", data, ACK_HEADER.size + ACK_SLOT * t)[0]
            for t in range(threads)]


def classify(rc: int, doc: Optional[dict[str, Any]], stderr: str) -> tuple[str, str]:
    """The outcome of a verifyacked run, from its exit status and its JSON document."""
    lines = stderr.strip().splitlines()
    error = (doc or {}).get("error") or (lines[-1] if lines else "")
    if rc == 0:
        return "ok", ""
    if rc == 1 and "acknowledged writes lost" in error:
        return "lost", error
    if rc == 1 and "--ack_file" in error:  # the harness's own problem, not the engine's
        return "error", error
    if rc == 1 and "Corruption" in error:
        return "corrupt", error
    # Failed before verifyacked ran (the open or the lock): kvbench writes no document before
    # its first result (docs/json.md), and older ones wrote one with no results.
    if rc == 1 and (doc is None or not doc.get("results")):
        return "reopen_failed", error
    return "error", f"verifyacked exit {rc}: {error}"


def run_trial(cfg: TrialConfig, engine: str, index: int, seed: int, kill_after: float,
              root: str) -> Trial:
    t = Trial(engine, index, seed, round(kill_after, 3))
    t.dir = os.path.join(root, f"{engine}-{index}")
    os.makedirs(t.dir)
    db, ack = os.path.join(t.dir, "db"), os.path.join(t.dir, "acks")
    common = [cfg.kvbench, f"--engine={engine}", f"--db={db}", f"--num={cfg.num}",
              f"--threads={cfg.threads}", f"--seed={seed}", f"--ack_file={ack}",
              "--report_interval_seconds=0", "--sync" if cfg.sync else "--nosync"]
    with open(os.path.join(t.dir, "fill.log"), "w") as log:
        fill = subprocess.Popen([*common, f"--benchmarks={cfg.benchmark}"], stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            # The kill clock starts at the fill's first acknowledged write, so that every kill
            # lands among the writes, however long the engine takes to open (under emulation,
            # for one).
            deadline = time.monotonic() + START_TIMEOUT
            while fill.poll() is None and time.monotonic() < deadline and \
                    not (os.path.exists(ack) and sum(read_ack_counts(ack)) > 0):
                time.sleep(0.005)
            try:
                t.fill_exit = fill.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                fill.send_signal(signal.SIGKILL)
                fill.wait()
                t.killed = True
        finally:
            if fill.poll() is None:
                fill.kill()
                fill.wait()
    if not os.path.exists(ack):
        t.outcome, t.message = "error", f"the fill never created its ack file (see {t.dir})"
        return t
    t.acknowledged = sum(read_ack_counts(ack))

    out = os.path.join(t.dir, "verify.json")
    try:
        p = subprocess.run([*common, "--use_existing_db", "--benchmarks=verifyacked",
                            f"--json={out}"], capture_output=True, text=True, errors="replace",
                           timeout=VERIFY_TIMEOUT)
    except subprocess.TimeoutExpired:
        t.outcome, t.message = "error", f"verifyacked took over {VERIFY_TIMEOUT:.0f} s"
        return t
    with open(os.path.join(t.dir, "verify.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    doc = None
    try:
        doc = results.load(out, [results.KVBENCH]).doc
    except UsageError:
        pass  # no usable document: classify() goes by the exit status and stderr
    t.outcome, t.message = classify(p.returncode, doc, p.stderr)
    for result in (doc or {}).get("results", []):
        role = result["roles"][0]
        t.checked, t.lost = role["found"] + role["not_found"], role["not_found"]
    if t.outcome in ("ok", "lost") and t.checked != t.acknowledged:
        t.outcome = "error"
        t.message = (f"verifyacked checked {t.checked} writes, the ack file holds "
                     f"{t.acknowledged}")
    if t.fill_exit not in (None, 0) and t.outcome == "ok":
        t.outcome, t.message = "error", f"the fill failed on its own (exit {t.fill_exit})"
    return t


def run_trials(cfg: TrialConfig, engines: list[str]) -> tuple[list[Trial], list[Tally]]:
    """Every trial of every engine, in a directory of its own under cfg.dir (or a temporary
    one); a trial that passed is removed unless cfg.keep."""
    rng = random.Random(cfg.seed)
    low, high = cfg.kill_after
    root = cfg.dir or tempfile.mkdtemp(prefix="kvb-crashtest-")
    os.makedirs(root, exist_ok=True)
    trials: list[Trial] = []
    tallies = []
    for engine in engines:
        tally = Tally(engine)
        for i in range(1, cfg.trials + 1):
            t = run_trial(cfg, engine, i, rng.randrange(1 << 32), rng.uniform(low, high), root)
            tally.add(t)
            trials.append(t)
            passed = t.outcome == "ok" or (t.outcome == "lost" and not cfg.sync)
            if passed and not cfg.keep:
                shutil.rmtree(t.dir, ignore_errors=True)
                t.dir = ""
            if not cfg.quiet:
                when = f"killed after {t.kill_after:.2f} s" if t.killed else \
                    f"ended before the kill at {t.kill_after:.2f} s (exit {t.fill_exit})"
                print(f"{engine} trial {i}/{cfg.trials}: {when}; {t.checked} acknowledged "
                      f"writes checked, {t.lost} lost; {t.outcome}"
                      + (f": {t.message}" if t.message else "")
                      + (f" [kept {t.dir}]" if t.dir else ""), file=sys.stderr)
        tallies.append(tally)
    if not cfg.dir and not any(t.dir for t in trials):
        shutil.rmtree(root, ignore_errors=True)
    return trials, tallies
