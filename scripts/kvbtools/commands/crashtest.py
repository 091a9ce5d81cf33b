"""kvb crashtest: kill fills with SIGKILL and check that every acknowledged write survived.

In the spirit of RocksDB's db_stress crash test. Per trial: a fill (fillrandom or fillseq) runs
with --ack_file, in which each worker thread publishes how many of its writes the engine has
acknowledged; at a seeded random moment the fill gets SIGKILL; then kvbench reopens the database
with --use_existing_db --benchmarks=verifyacked, which reads back every acknowledged key and
checks its value. That also checks that the database reopens after the kill.

With --sync (the default) every acknowledged write must be there: a lost write, a failed reopen
or a wrong value fails the run (exit 1). Without --sync a lost write is reported, not a failure:
SIGKILL is not a power loss, the page cache survives it, so what is lost depends on whether the
engine had handed the write to the OS before acknowledging it (docs/workloads.md).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from kvbtools.core import command, manifest, results, table
from kvbtools.core.errors import UsageError

# The ack file (src/workload/ack_log.h): a 64-byte header, then one 64-byte slot per thread whose
# first 8 bytes are its count of acknowledged writes. Host byte order.
ACK_HEADER = struct.Struct("=8sIIQQIIIId8x")
ACK_MAGIC = b"KVBACK\0\0"
ACK_SLOT = 64
# How long a fill may take to acknowledge its first write, and a verification to finish.
START_TIMEOUT = 60.0
VERIFY_TIMEOUT = 600.0


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


def register(sub: Any) -> None:
    p = command.add(sub, "crashtest", __doc__, run)
    p.add_argument("--kvbench", required=True, help="the kvbench binary")
    p.add_argument("--engines",
                   help="comma-separated engines (default: every storage engine compiled into "
                        "--kvbench, as its --list-engines says)")
    p.add_argument("--trials", type=int, default=10, help="kills per engine (default 10)")
    p.add_argument("--sync", action=argparse.BooleanOptionalAction, default=True,
                   help="fill with --sync (default); --no-sync reports losses without failing")
    p.add_argument("--threads", type=int, default=2, help="fill threads (default 2)")
    p.add_argument("--num", type=int, default=10_000_000,
                   help="fill size; large enough that the fill is still running at the kill "
                        "(default 10000000; the kill bounds what is written)")
    p.add_argument("--benchmark", choices=["fillrandom", "fillseq"], default="fillrandom")
    p.add_argument("--kill-after", default="0.5,3", metavar="MIN,MAX",
                   help="seconds after the fill's first acknowledged write, drawn uniformly "
                        "(default 0.5,3)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the kill moments and each trial's kvbench --seed (default 0)")
    p.add_argument("--json", metavar="OUT", help="write every trial and the tallies here")
    p.add_argument("--dir", help="where the databases go (default: a new temporary directory)")
    p.add_argument("--keep", action="store_true",
                   help="keep every trial's database (failed trials' are always kept)")
    p.add_argument("--quiet", action="store_true", help="no per-trial lines on stderr")


def parse_kill_after(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        low, high = (float(parts[0]), float(parts[1])) if len(parts) == 2 else (-1.0, -1.0)
    except ValueError:
        low = high = -1.0
    if not (0 <= low <= high <= 86400):
        raise UsageError(f"--kill-after '{text}': expected MIN,MAX seconds with "
                         "0 <= MIN <= MAX <= 86400")
    return low, high


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
    if rc == 1 and doc is not None and not doc.get("results"):
        return "reopen_failed", error  # failed before verifyacked ran: the open or the lock
    return "error", f"verifyacked exit {rc}: {error}"


def run_trial(args: argparse.Namespace, engine: str, index: int, seed: int, kill_after: float,
              root: str) -> Trial:
    t = Trial(engine, index, seed, round(kill_after, 3))
    t.dir = os.path.join(root, f"{engine}-{index}")
    os.makedirs(t.dir)
    db, ack = os.path.join(t.dir, "db"), os.path.join(t.dir, "acks")
    common = [args.kvbench, f"--engine={engine}", f"--db={db}", f"--num={args.num}",
              f"--threads={args.threads}", f"--seed={seed}", f"--ack_file={ack}",
              "--report_interval_seconds=0", "--sync" if args.sync else "--nosync"]
    with open(os.path.join(t.dir, "fill.log"), "w") as log:
        fill = subprocess.Popen([*common, f"--benchmarks={args.benchmark}"], stdout=log,
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


def tally_table(tallies: list[Tally], sync: bool) -> str:
    head = ["engine", "trials", "killed", "acked writes checked", "lost writes",
            "trials with loss", "reopen failures", "corruptions", "errors", "verdict"]
    rows = []
    for a in tallies:
        if a.failed(sync):
            verdict = "FAIL"
        elif a.lost:
            verdict = "lost writes (no --sync: reported, not a failure)"
        else:
            verdict = "OK"
        rows.append([a.engine, str(a.trials), str(a.killed), f"{a.checked:,}", f"{a.lost:,}",
                     str(a.trials_with_loss), str(a.reopen_failures), str(a.corruptions),
                     str(a.errors), verdict])
    return "\n".join(table.render(rows, header=head, left=(0, -1), rule=True))


def checked_flags(args: argparse.Namespace) -> tuple[list[str], float, float]:
    """The engines to test (--engines, or every storage engine of the binary) and the range of
    --kill-after; refuses bad flags before any trial."""
    if args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}")
    if args.threads < 1 or args.threads > 1024:
        raise UsageError(f"--threads must be 1..1024, got {args.threads}")
    if args.num < 1:
        raise UsageError(f"--num must be positive, got {args.num}")
    low, high = parse_kill_after(args.kill_after)
    if not (os.path.isfile(args.kvbench) and os.access(args.kvbench, os.X_OK)):
        raise UsageError(f"--kvbench {args.kvbench} is not an executable file")
    available = manifest.engines_of(args.kvbench)
    storage = [e for e, kind in available.items() if kind == "storage"]
    if args.engines is None and not storage:
        raise UsageError(f"{args.kvbench} has no storage engine compiled in; name engines "
                         "with --engines")
    engines = args.engines.split(",") if args.engines is not None else storage
    for e in engines:
        if e not in available:
            raise UsageError(f"engine '{e}' is not compiled into {args.kvbench} "
                             f"(it has: {', '.join(available)})")
    if len(set(engines)) != len(engines):
        raise UsageError(f"--engines '{args.engines}' names an engine twice")
    if args.dir and os.path.isdir(args.dir) and os.listdir(args.dir):
        raise UsageError(f"--dir {args.dir} is not empty; give a new or empty directory")
    return engines, low, high


def run_trials(args: argparse.Namespace, engines: list[str], low: float,
               high: float) -> tuple[list[Trial], list[Tally]]:
    """Every trial of every engine, in a directory of its own under --dir (or a temporary one);
    a trial that passed is removed unless --keep."""
    rng = random.Random(args.seed)
    root = args.dir or tempfile.mkdtemp(prefix="kvb-crashtest-")
    os.makedirs(root, exist_ok=True)
    trials: list[Trial] = []
    tallies = []
    for engine in engines:
        tally = Tally(engine)
        for i in range(1, args.trials + 1):
            t = run_trial(args, engine, i, rng.randrange(1 << 32), rng.uniform(low, high), root)
            tally.add(t)
            trials.append(t)
            passed = t.outcome == "ok" or (t.outcome == "lost" and not args.sync)
            if passed and not args.keep:
                shutil.rmtree(t.dir, ignore_errors=True)
                t.dir = ""
            if not args.quiet:
                when = f"killed after {t.kill_after:.2f} s" if t.killed else \
                    f"ended before the kill at {t.kill_after:.2f} s (exit {t.fill_exit})"
                print(f"{engine} trial {i}/{args.trials}: {when}; {t.checked} acknowledged "
                      f"writes checked, {t.lost} lost; {t.outcome}"
                      + (f": {t.message}" if t.message else "")
                      + (f" [kept {t.dir}]" if t.dir else ""), file=sys.stderr)
        tallies.append(tally)
    if not args.dir and not any(t.dir for t in trials):
        shutil.rmtree(root, ignore_errors=True)
    return trials, tallies


def run(args: argparse.Namespace) -> int:
    engines, low, high = checked_flags(args)
    trials, tallies = run_trials(args, engines, low, high)
    failed = any(a.failed(args.sync) for a in tallies)
    print(f"crashtest: {args.benchmark}, {'--sync' if args.sync else 'no --sync'}, "
          f"--threads={args.threads}, --num={args.num}, SIGKILL {low:g}..{high:g} s after the "
          f"first acknowledged write, --seed={args.seed}")
    print(tally_table(tallies, args.sync))
    for a in tallies:
        for m in a.messages:
            print(f"  {a.engine} {m}")
    if any(not t.killed for t in trials):
        print("  note: some fills ended before their kill; raise --num so that every trial "
              "kills a running fill")
    rc = 1 if failed else 0
    if args.json:
        results.write_json(args.json, {
            "schema": "kvbench-crashtest", "schema_version": 1, "kvbench": args.kvbench,
            "benchmark": args.benchmark, "sync": args.sync, "threads": args.threads,
            "num": args.num, "kill_after": [low, high], "seed": args.seed, "exit": rc,
            "engines": [asdict(a) for a in tallies], "trials": [asdict(t) for t in trials]})
    return rc
