"""Builds (of core/presets' presets) and benchmark runs, for matrix, versions, bisect and
studies; results directories. Build trees go to build/kvb/<tag> (never build/<preset>, the
user's), configured with `cmake --preset P -B build/kvb/<tag>` (the preset's toolchain and flags,
tests off); libraries from source or a prefix reach CMake as -DKVBENCH_<DEP>_SOURCE_DIR or
-DKVBENCH_<DEP>_ROOT (cmake/).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Sequence

from kvbtools.measure import callgrind
from kvbtools.measure.plan import Variant
from kvbtools.core import manifest
from kvbtools.core.output import progress
from kvbtools.core.errors import RunError
from kvbtools.core.host import ROOT


# ---- builds ----------------------------------------------------------------------------------

@dataclass
class Build:
    """One build of kvbench: a preset plus libraries from source or prefixes."""
    label: str
    preset: str
    tag: str                                          # build/kvb/<tag>
    defines: dict[str, str] = field(default_factory=dict)
    prebuilt: str = ""          # a kvbench binary to use as it is (kvb matrix --kvbench)
    layouts: int = 1            # links per build, seeds 0..K-1 (cmake/KvbenchLayout.cmake)
    where: str = ""             # the build tree, when not build/kvb/<tag> (kvb bisect's slots)

    @property
    def dir(self) -> str:
        return self.where or os.path.join(ROOT, "build", "kvb", self.tag)

    def binary(self, micro: bool) -> str:
        if self.prebuilt:
            return self.prebuilt
        return os.path.join(self.dir, "bench", "kvbench_micro") if micro else \
            os.path.join(self.dir, "src", "kvbench")

    def binaries(self, micro: bool) -> list[str]:
        """The binary of each layout seed 0..K-1 (one: the default link, when K is 1)."""
        if self.prebuilt or self.layouts <= 1:
            return [self.binary(micro)]
        return [f"{self.binary(micro)}-layout{s}" for s in range(self.layouts)]

    def configure_cmd(self) -> list[str]:
        seeds = ";".join(str(s) for s in range(self.layouts)) if self.layouts > 1 else ""
        return ["cmake", "--preset", self.preset, "-B", self.dir, "-DKVBENCH_BUILD_TESTS=OFF",
                f"-DKVBENCH_LAYOUT_SEEDS={seeds}",
                *(f"-D{k}={v}" for k, v in sorted(self.defines.items()))]

    def build_cmd(self, micro: bool) -> list[str]:
        """Builds the binaries measured and nothing else: the link of each seed (not the
        -layouts target, which links the default binary too), or the default link."""
        target = "kvbench_micro" if micro else "kvbench"
        return ["cmake", "--build", self.dir, "-j", str(jobs()), "--target",
                *([f"{target}-layout{s}" for s in range(self.layouts)] if self.layouts > 1
                  else [target])]


def jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def source_define(dep: str, src: str) -> tuple[str, str]:
    return f"KVBENCH_{dep.upper()}_SOURCE_DIR", os.path.abspath(src)


def root_define(dep: str, prefix: str) -> tuple[str, str]:
    return f"KVBENCH_{dep.upper()}_ROOT", os.path.abspath(prefix)


class BuildError(RunError):
    """A build or a benchmark run failed: matrix skips that build, bisect skips that commit."""


def run_logged(cmd: list[str], log: str, cwd: str | None = None,
               wrap: list[str] | None = None, env: dict[str, str] | None = None) -> None:
    """Runs `cmd` (under `wrap`, e.g. a tracer, when given) with its output appended to `log`.
    Raises BuildError when it fails."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        p = subprocess.run([*(wrap or []), *cmd], cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                           env=env)
    if p.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed ({p.returncode}); log: {log}")


def do_build(b: Build, micro: bool, step: str = "", wrap: list[str] | None = None,
             env: dict[str, str] | None = None) -> float:
    """Configures and builds (under `wrap` with `env`, see run_logged); returns the seconds it
    took. Raises BuildError."""
    os.makedirs(b.dir, exist_ok=True)
    log = os.path.join(b.dir, "kvb-build.log")
    progress(f"{step}building {b.label} ({b.preset}) in {os.path.relpath(b.dir, ROOT)}"
             + "".join(f" -D{k}={v}" for k, v in sorted(b.defines.items())))
    t0 = time.monotonic()
    start = os.path.getsize(log) if os.path.exists(log) else 0
    run_logged(b.configure_cmd(), log, cwd=ROOT, wrap=wrap, env=env)
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        text = f.read()
    if "Manually-specified variables were not used" in text:
        unused = [k for k in b.defines
                  if re.search(rf"^\s+{re.escape(k)}\s*$", text.split(
                      "Manually-specified variables were not used", 1)[1], re.M)]
        if unused:
            raise BuildError(f"CMake ignored {', '.join(unused)}: this kvbench tree cannot build "
                             "libraries from source or a prefix (the src-build work is not in it)")
    run_logged(b.build_cmd(micro), log, cwd=ROOT, wrap=wrap, env=env)
    return time.monotonic() - t0


def relink(b: Build, micro: bool, wrap: list[str] | None = None) -> None:
    """Links `b` to b.layouts seeds: CMake with the longer KVBENCH_LAYOUT_SEEDS, then the link
    targets, which link the new seeds from the objects already compiled (the links there are up
    to date); under `wrap` when given (a build job). Raises BuildError."""
    log = os.path.join(b.dir, "kvb-build.log")
    progress(f"relinking {b.label} to {b.layouts} links in {os.path.relpath(b.dir, ROOT)}")
    run_logged(b.configure_cmd(), log, cwd=ROOT, wrap=wrap)
    run_logged(b.build_cmd(micro), log, cwd=ROOT, wrap=wrap)


# ---- benchmark runs --------------------------------------------------------------------------

@dataclass
class Workload:
    """What every run of a comparison runs: kvbench_micro's benchmarks, or kvbench's workloads
    on its engines (state.json keeps it as a kvbench-mode bisect's "plan")."""
    micro: bool
    micro_filter: str = "/4096$"
    min_time: float = 0.1
    engines: list[str] = field(default_factory=list)
    workloads: str = "fillseq,readrandom"
    num: int = 100000
    extra: list[str] = field(default_factory=list)
    instructions: bool = False   # count instructions under callgrind (callgrind.py)


def run_once(binary: str, plan: Workload, out: str, engine: str = "",
             args: list[str] | None = None) -> None:
    """One measurement: kvbench_micro once (one repetition) or kvbench once on a fresh database.
    Writes its JSON to `out`. Raises BuildError on failure."""
    if plan.micro:
        cmd = [binary, f"--benchmark_filter={plan.micro_filter}",
               f"--benchmark_min_time={plan.min_time:g}", f"--benchmark_out={out}",
               "--benchmark_out_format=json", *plan.extra]
        if plan.instructions:
            callgrind.micro_instructions(cmd, out, binary)
            return
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    else:
        with tempfile.TemporaryDirectory(prefix="kvb-db.") as db:
            cmd = [binary, f"--engine={engine}", f"--benchmarks={plan.workloads}",
                   f"--num={plan.num}", f"--db={db}/db", "--report_interval_seconds=0",
                   f"--json={out}", *plan.extra, *(args or [])]
            if plan.instructions:
                callgrind.kv_instructions(cmd, out, binary)
                return
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")


def micro_names(binary: str, plan: Workload) -> list[str]:
    """The kvbench_micro benchmarks plan.micro_filter selects in `binary`, in its order."""
    cmd = [binary, f"--benchmark_filter={plan.micro_filter}", "--benchmark_list_tests=true"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return [x.strip() for x in p.stdout.splitlines() if x.strip()]


def exact_filter(names: Sequence[str]) -> str:
    """A --benchmark_filter that selects exactly `names` (POSIX extended regex, as Google
    Benchmark's)."""
    return "^(" + "|".join(re.sub(r"([.\\[\](){}*+?|^$])", r"\\\1", n) for n in names) + ")$"


def check_plan(binary: str, plan: Workload) -> None:
    """A kvbench plan's engines, workloads and extra flags checked against the kvbench that will
    run it, before the first run: a name it does not know, or a value it refuses, is bad input
    (exit 2), not a failed run after the base was measured. kvbench_micro takes whatever filter
    it is given. (A study checks each series' own flags too: manifest.check_flags.)"""
    if plan.micro:
        return
    manifest.check_names(binary, plan.engines, plan.workloads, plan.extra)
    for engine in plan.engines:
        manifest.check_flags(binary, run_flags(plan, engine))


def run_flags(plan: Workload, engine: str, args: Sequence[str] = ()) -> list[str]:
    """The flags of a KV run that define its work (run_once adds its --db and --json)."""
    return [f"--engine={engine}", f"--benchmarks={plan.workloads}", f"--num={plan.num}",
            *plan.extra, *args]


def engines(variant: Variant, workload: Workload) -> list[str]:
    """The engines a variant runs, one run each a round: none for kvbench_micro, a study's
    variant's own, else every engine of the workload."""
    return [""] if workload.micro else [variant.engine] if variant.engine else workload.engines


def run_file(outdir: str, label: str, engine: str, r: int, suffix: str = "") -> str:
    """<outdir>/<label>[.<engine>].r<round><suffix>.json, the label made a file name."""
    name = re.sub(r"[^A-Za-z0-9._+-]+", "_", label)
    return os.path.join(outdir, f"{name}{'.' + engine if engine else ''}.r{r}{suffix}.json")
