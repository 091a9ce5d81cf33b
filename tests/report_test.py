#!/usr/bin/env python3
"""Tests of the reports with figures (docs/report.md), run by ctest: `kvb report --html` on a
real three-engine run of the build's kvbench and on kvbench_micro output, rendered in headless
Chromium when it is installed; --svg/--png files; determinism; bad input; matplotlib missing;
the .hgrm export; the pages of compare, matrix/versions results directories, bisect and history.
Pages carry kvbench's verdicts: noisy runs once at the top and a mark on their figures, the
summary's file and repeat, each engine's memory in its own terms, one colour per engine on every
page, ratio axes and an overview that stay readable (log, medians, zeros) and verdicts without a
decision.
"""
from __future__ import annotations

import copy
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS, load_json, write_json  # noqa: E402

# The interpreter scripts/kvb runs under (Debian's, which has python3-matplotlib).
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SUITE = "fillseq,settle,readrandom,overwrite,settle,fwdrangewhilewriting"
ENGINES = tuple(kvbtest.storage_engines())
TMP = ""
RUNS: dict[str, str] = {}      # engine -> its JSON
MICRO = ""                     # a kvbench_micro JSON with repetitions


def kvb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KVB, *args], capture_output=True, text=True, env=env, timeout=600)


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def setUpModule() -> None:
    global TMP, MICRO
    TMP = tempfile.mkdtemp(prefix="kvb-report-test.")
    compiled = [e.lower() for e in ARGS.engines.replace(",", ";").split(";") if e]
    for engine in ENGINES:
        if engine not in compiled:
            continue
        out = os.path.join(TMP, f"{engine}.json")
        # The paced writer runs only while the readers do (tens of ms on lmdb): on a loaded
        # machine it may not get a CPU before they finish, and then it has no latency to draw.
        # The page must show its figures when it wrote, so up to three tries for a run in which
        # it did.
        for _ in range(3):
            subprocess.run([ARGS.kvbench, f"--engine={engine}", f"--db={TMP}/db-{engine}",
                            "--num=20000", f"--benchmarks={SUITE}",
                            "--benchmark_write_rate_limit=1048576",
                            "--report_interval_seconds=0.02", f"--json={out}"],
                           check=True, capture_output=True, timeout=300)
            shutil.rmtree(f"{TMP}/db-{engine}", ignore_errors=True)
            if load_json(out)["results"][-1]["roles"][-1]["latency_ns"]["count"] > 0:
                break
        RUNS[engine] = out
    MICRO = os.path.join(TMP, "micro.json")
    subprocess.run([ARGS.micro, "--benchmark_filter=^crc32c/(table|hw_3way)/(256|4096)$",
                    "--benchmark_min_time=0.005", "--benchmark_repetitions=3",
                    f"--benchmark_out={MICRO}", "--benchmark_out_format=json"],
                   check=True, capture_output=True, timeout=300)


def tearDownModule() -> None:
    shutil.rmtree(TMP, ignore_errors=True)


def expected_figures(paths: list[str]) -> int:
    """The documented formula (docs/report.md): 1 overview + per (benchmark entry, role) a
    throughput figure when any run has interval samples, a latency figure when any run timed an
    operation, and a cost figure; + one GB/s figure per kvbench_micro family."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    families: set[str] = set()
    any_ops = False
    for p in paths:
        doc = load_json(p)
        if doc.get("schema") != "kvbench-run":
            families |= {b["name"].split("/")[0] for b in doc["benchmarks"]}
            continue
        seen: dict[str, int] = {}
        for r in doc["results"]:
            if r["repeat"] == 1:
                seen[r["benchmark"]] = seen.get(r["benchmark"], 0) + 1
            for role in r["roles"]:
                groups.setdefault((r["benchmark"], seen[r["benchmark"]], role["role"]),
                                  []).append(role)
                any_ops = any_ops or role["ops"] > 0
    n = int(any_ops) + len(families)
    for roles in groups.values():
        n += 1 + any(r["intervals"]["series"] for r in roles) + any(
            r["latency_ns"]["count"] > 0 for r in roles)
    return n


def svg_count(page: str) -> int:
    return len(re.findall(r"<svg\b", page))


def svg_texts(page: str) -> list[str]:
    """The text matplotlib drew (as shapes), from the comment it writes before each."""
    return re.findall(r"<!-- (.*?) -->", page)


def figure_html(page: str, name: str) -> str:
    """The <figure> of one figure of a page: its inline SVG and its caption."""
    start = page.index(f'<figure id="fig-{name}">')
    return page[start:page.index("</figure>", start)]


def caption(page: str, name: str) -> str:
    fig = figure_html(page, name)
    return html.unescape(re.sub(r"<[^>]+>", " ", fig[fig.index("<figcaption>"):]))


def legend_colour(svg: str, label: str) -> str:
    """The colour of `label`'s handle in the figure's legend: the last stroke colour drawn in
    the legend before the label's text."""
    legend = re.search(r'<g id="[^"]*legend_\d+">', svg)
    assert legend is not None, "no legend"
    text = svg.index(f"<!-- {label} -->", legend.start())
    colours = re.findall(r"stroke: (#[0-9a-f]{6})", svg[legend.start():text])
    assert colours, f"no handle before {label}"
    return colours[-1]


def context_row(page: str, name: str) -> dict[str, str]:
    """One row of the page's context table: run label -> its cell (a spanning cell for all)."""
    table = page[page.index('<table class="kv">'):]
    table = table[:table.index("</table>")]
    labels = re.findall(r"<th>([^<]*)</th>", table.split("</tr>")[0])[1:]
    row = re.search(rf"<tr><th>{re.escape(name)}</th>(.*?)</tr>", table)
    assert row is not None, name
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c))
             for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
    return {lab: cells[0] if len(cells) == 1 else cells[i] for i, lab in enumerate(labels)}


def summary_rows(page: str) -> tuple[list[str], list[list[str]]]:
    """The summary table: its header and rows, as text."""
    start = page.index('id="summary"')
    table = page[page.index("<table>", start):page.index("</table>", start)]
    rows = [[html.unescape(re.sub(r"<[^>]+>", "", c))  # a cell's text: no <wbr> in it
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)]
            for r in table.split("</tr>") if "<t" in r]
    return rows[0], rows[1:]


NOISE = "other processes used 94.0% of the 2 CPUs (threshold 10.0%)"
# A bisect's totals line (state.json and bisect.json "totals"; measure/spent.py).
COST = ("5 build(s) (96 s, 2 side by side), 4 relink(s) adding links (12 s), 3 commit(s) counted "
        "(70 s, 2 side by side), 180 round(s) of 560 run(s), 240.1 s measuring")


def noisy_copy(path: str, name: str, noisy: bool) -> str:
    """A copy of a real run whose environment audit says it was noisy (or quiet)."""
    doc = load_json(path)
    env = doc["context"]["environment"]
    env["noisy"] = noisy
    env["noisy_reason"] = NOISE if noisy else ""
    return write_json(os.path.join(TMP, name), doc)


def screenshot(test: unittest.TestCase, page: str, shot: str) -> None:
    """Renders a page in headless Chromium (skips when it is missing): no console error, a
    1280 px wide PNG at `shot` (kept for a person to look at while TMP is)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        test.skipTest("chromium is not installed (scripts/install-deps.sh installs it): "
                      "the page was checked but not rendered")
    profile = tempfile.mkdtemp(prefix="kvb-chromium.", dir=TMP)
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--no-first-run",
                        f"--user-data-dir={profile}", f"--screenshot={shot}",
                        "--window-size=1280,4000", "--enable-logging=stderr", "--v=0",
                        "file://" + page], capture_output=True, text=True, timeout=180)
    why = kvbtest.browser_failure_is_the_emulators(p.returncode)
    if why:
        test.skipTest(why)
    test.assertEqual(p.returncode, 0, p.stderr[-2000:])
    console = [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln]
    test.assertEqual(console, [])
    with open(shot, "rb") as f:
        head = f.read(24)
    test.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
    test.assertEqual(struct.unpack(">I", head[16:20])[0], 1280)


class ThreeEngineReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if len(RUNS) < 2:
            raise unittest.SkipTest(f"needs at least two of {', '.join(ENGINES)} compiled in")
        cls.dir = os.path.join(TMP, "three")
        os.makedirs(cls.dir)
        cls.html = os.path.join(cls.dir, "r.html")
        cls.p = kvb("report", "--html", cls.html, *RUNS.values())

    def test_one_self_contained_file(self) -> None:
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertIn(f"report: {self.html}", self.p.stdout)
        self.assertEqual(os.listdir(self.dir), ["r.html"])  # one file, nothing beside it
        page = read(self.html)
        for bad in ("http://", "https://", "<script", "<link", "@import", "<img", "<iframe"):
            self.assertNotIn(bad, page)
        # No resource reference of any scheme or protocol-relative: only in-page anchors.
        refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"|url\(([^)]*)\)', page)
        for ref in (a or b for a, b in refs):
            self.assertTrue(ref.startswith("#"), ref)
        # The section links can wrap between links (each is nowrap): a page with many sections
        # was one unbreakable line, wider than the window.
        nav = re.search(r"<nav>(.*?)</nav>", page, re.S)
        if nav:
            self.assertNotIn("</a><a", nav.group(1))

    def test_an_svg_per_figure_by_the_documented_formula(self) -> None:
        page = read(self.html)
        want = expected_figures(list(RUNS.values()))
        # fillseq, readrandom, overwrite, fwdrangewhilewriting reader and writer: 1 + 5 x 3.
        self.assertEqual(want, 16)
        self.assertEqual(svg_count(page), want)
        self.assertIn(f"({want} figures)", self.p.stdout)
        for name in ("overview-throughput", "fillseq-throughput", "readrandom-latency",
                     "overwrite-cost", "fwdrangewhilewriting-reader-throughput",
                     "fwdrangewhilewriting-writer-throughput",
                     "fwdrangewhilewriting-writer-latency"):
            self.assertIn(f'id="fig-{name}"', page)
        texts = svg_texts(page)
        for engine in RUNS:
            self.assertIn(engine, texts)  # every engine in the legends
        self.assertIn("writer's target 1.00 MB/s", texts)
        for section in ("Context", "Libraries (as loaded)", "Summary"):
            self.assertIn(f">{section}</h", page)

    def test_context_lists_libraries_and_warnings(self) -> None:
        page = read(self.html)
        doc = load_json(next(iter(RUNS.values())))
        for lib in doc["context"]["libraries"]:
            self.assertIn(f"<td>{lib['name']}</td><td>{lib['version']}</td>", page)
        for w in doc["context"]["warnings"]:
            self.assertIn(w["message"][:60].replace('"', "&quot;"), page)
        self.assertIn(doc["context"]["build"]["cxx_flags"], page)

    def test_renders_in_headless_chromium_without_console_errors(self) -> None:
        screenshot(self, self.html, os.path.join(TMP, "shot.png"))

    def test_summary_says_each_rows_file_and_repeat(self) -> None:
        header, rows = summary_rows(read(self.html))
        self.assertEqual(header[:3], ["file", "repeat", "engine"])
        self.assertEqual({r[0] for r in rows}, {os.path.basename(p) for p in RUNS.values()})
        self.assertEqual({r[1] for r in rows}, {"1/1"})

    def test_engine_memory_in_each_engines_own_terms(self) -> None:
        page = read(self.html)
        memory = context_row(page, "engine memory")
        if "lmdb" in memory:  # LMDB has no cache: never "cache 256 MiB"
            self.assertIn("no cache of its own", memory["lmdb"])
            self.assertNotIn("256 MiB", memory["lmdb"])
        if "rocksdb" in memory:
            self.assertIn("block cache 256 MiB", memory["rocksdb"])
        if "wiredtiger" in memory:
            self.assertIn("cache size 256 MiB", memory["wiredtiger"])
        self.assertNotIn("cache", next(iter(context_row(page, "workload").values())))

    def test_few_intervals_say_why_in_the_caption(self) -> None:
        text = caption(read(self.html), "fillseq-throughput")
        for engine, path in RUNS.items():
            n = len(load_json(path)["results"][0]["roles"][0]["intervals"]["series"])
            said = re.search(rf"{engine}: only {n} intervals?: the run lasted [0-9.e-]+ s at "
                             r"--report_interval_seconds=0.02; a shorter interval gives more",
                             text)
            self.assertEqual(bool(said), n < 20, (engine, n, text))

    def test_paced_writers_axis_shows_line_and_target(self) -> None:
        # Drawn in the interpreter kvb uses (matplotlib): the y axis ends above the highest
        # line and the dashed target, with room.
        p = subprocess.run([PYTHON, "-c", """if 1:
            import sys; sys.path.insert(0, sys.argv[1])
            from kvbtools.core import results
            from kvbtools.pages import figures, run_figures
            runs = run_figures.label_runs(results.load_all(sys.argv[2:]))
            g = next(g for g in run_figures.groups(runs) if g.role == "writer")
            fig, _ = run_figures.throughput(g, run_figures.colours_for(runs))
            ax = fig.draw(figures.pyplot()).axes[0]
            top = max(max(line.get_ydata(), default=0) for line in ax.get_lines())
            print(ax.get_ylim()[1] / top)""", SCRIPTS, *RUNS.values()],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(float(p.stdout), 1.1)


class FigureFilesTest(unittest.TestCase):
    def test_svg_and_png_files_with_stable_names_and_1200px(self) -> None:
        run = RUNS.get("lmdb") or next(iter(RUNS.values()))
        sdir, pdir = os.path.join(TMP, "svgs"), os.path.join(TMP, "pngs")
        p = kvb("report", "--svg", sdir, "--png", pdir, run)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = sorted(os.path.splitext(f)[0] for f in os.listdir(sdir))
        self.assertEqual(names, sorted(os.path.splitext(f)[0] for f in os.listdir(pdir)))
        self.assertIn("readrandom-throughput", names)
        self.assertIn("fwdrangewhilewriting-writer-latency", names)
        self.assertEqual(len(names), expected_figures([run]))
        with open(os.path.join(pdir, "readrandom-throughput.png"), "rb") as f:
            head = f.read(24)
        self.assertEqual(struct.unpack(">I", head[16:20])[0], 1200)
        svg = read(os.path.join(sdir, "readrandom-latency.svg"))
        self.assertTrue(svg.startswith("<?xml"))
        self.assertIn('xmlns="http://www.w3.org/2000/svg"', svg)  # a standalone file
        # A file has no caption: the cost figure says itself what its hatching is.
        texts = svg_texts(read(os.path.join(sdir, "fillseq-cost.svg")))
        self.assertIn("user CPU; voluntary switches (solid, below)", texts)
        self.assertIn("sys CPU; involuntary switches (hatched, above)", texts)

    def test_same_input_same_bytes(self) -> None:
        a, b = os.path.join(TMP, "a.html"), os.path.join(TMP, "b.html")
        for out in (a, b):
            p = kvb("report", "--html", out, next(iter(RUNS.values())), MICRO)
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read(a), read(b))


class NoisyRunTest(unittest.TestCase):
    """A run whose JSON says it was noisy (a real run's, edited), beside the same run quiet."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.engine, run = next(iter(RUNS.items()))
        cls.noisy = noisy_copy(run, "noisy.json", True)
        cls.quiet = noisy_copy(run, "quiet.json", False)
        cls.html = os.path.join(TMP, "noisy.html")
        cls.svgs = os.path.join(TMP, "noisy-svg")
        cls.p = kvb("report", "--html", cls.html, "--svg", cls.svgs, cls.noisy, cls.quiet)

    def test_said_at_the_top_of_the_page(self) -> None:
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        page = html.unescape(read(self.html))
        said = page.index(f"(noisy.json): this run was noisy: {NOISE}.")
        self.assertLess(said, page.index('id="summary"'))
        self.assertNotIn("(quiet.json): this run was noisy", page)

    def test_said_once_and_every_figure_that_draws_it_marked(self) -> None:
        # Issue 42: the reason in bold red under every figure (9 on a compare page, 41 with
        # --metric all). Once, at the top; each figure a mark that links there.
        page = read(self.html)
        names = re.findall(r'<figure id="fig-([^"]+)">', page)
        self.assertEqual(len(names), expected_figures([self.noisy, self.quiet]))
        self.assertGreater(len(names), 3)
        self.assertEqual(html.unescape(page).count(NOISE), 1)
        self.assertEqual(page.count('id="noisy-runs"'), 1)
        for name in names:  # both runs are in every figure
            self.assertIn(f'<figcaption><a class="noisy" href="#noisy-runs">noisy: {self.engine} '
                          "(noisy.json)</a>", figure_html(page, name))
        # A figure file has no page: the line, with the reason, is under the figure itself.
        first = "Noisy run, by kvbench's own measure: " + self.engine + " (noisy.json): other"
        for f in os.listdir(self.svgs):
            texts = svg_texts(read(os.path.join(self.svgs, f)))
            self.assertTrue(any(t.startswith(first) for t in texts), f)

    def test_summary_rows_of_the_noisy_run_say_so(self) -> None:
        _, rows = summary_rows(read(self.html))
        for r in rows:
            self.assertEqual("noisy run" in r[-1], r[0] == "noisy.json", r)

    def test_a_quiet_page_says_nothing_of_noise(self) -> None:
        out = os.path.join(TMP, "quiet.html")
        p = kvb("report", "--html", out, self.quiet)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertNotIn("was noisy", page)
        self.assertNotIn("Noisy run", page)

    def test_renders_in_headless_chromium(self) -> None:
        screenshot(self, self.html, os.path.join(TMP, "noisy-shot.png"))

    def test_a_busy_micro_file_is_said_too(self) -> None:
        # kvbench_micro measures no steal or foreign CPU: wall time twice the CPU time says it.
        data = load_json(MICRO)
        for b in data["benchmarks"]:
            if "real_time" in b and "cpu_time" in b:
                b["real_time"] = 2 * b["cpu_time"]
        busy = write_json(os.path.join(TMP, "busy-micro.json"), data)
        out = os.path.join(TMP, "busy.html")
        p = kvb("report", "--html", out, busy)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = html.unescape(read(out))
        self.assertLess(page.index("wall time 2.00x CPU time"), page.index('id="micro"'))
        self.assertEqual(page.count("wall time 2.00x CPU time"), 1)
        self.assertIn('<a class="noisy" href="#noisy-runs">noisy: ',
                      figure_html(page, "crc32c-gbps"))

    def test_a_comparison_page_says_it_once(self) -> None:
        # Every metric a figure (--metric all: 40 or so), a side noisy: its reason once.
        out = os.path.join(TMP, "noisy-compare.html")
        p = kvb("compare", "--html", out, "--metric", "all", self.quiet, self.noisy)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        page = read(out)
        names = re.findall(r'<figure id="fig-([^"]+)">', page)
        self.assertGreater(len(names), 9)
        self.assertEqual(html.unescape(page).count(NOISE), 1)
        for name in names:
            self.assertIn('<a class="noisy" href="#noisy-runs">noisy: noisy.json</a>',
                          figure_html(page, name))
        # The text tables at the bottom count the noisy runs and point up.
        self.assertIn("noisy: noisy.json: 1 of 1 run(s) noisy (why: at the top)", page)


class OverviewTest(unittest.TestCase):
    """Issue 42: with the null engine at 47.5 M ops/s, rocksdb, wiredtiger and lmdb were slivers
    of the overview's one linear scale."""

    def runs(self, factor: float, engine: str) -> list[str]:
        """A real run, and a copy of it as `engine` at `factor` times its ops/s."""
        run = next(iter(RUNS.values()))
        doc = load_json(run)
        doc["context"]["engine"].update(name=engine, reference=engine in ("null", "memory"))
        for result in doc["results"]:
            for role in result["roles"]:
                role["ops_per_sec"] *= factor
        return [run, write_json(os.path.join(TMP, f"overview-{engine}.json"), doc)]

    def overview(self, files: list[str], name: str) -> tuple[str, list[str]]:
        out = os.path.join(TMP, name)
        p = kvb("report", "--html", out, *files)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        return (caption(page, "overview-throughput"),
                svg_texts(figure_html(page, "overview-throughput")))

    def test_an_engine_100x_the_others_puts_them_on_a_log_axis(self) -> None:
        text, drawn = self.overview(self.runs(100.0, "null"), "overview-log.html")
        self.assertIn("all on one logarithmic axis, each gridline 10x the one below", text)
        self.assertIn("ops/s per benchmark (median of repeats; one log axis); higher is better",
                      drawn)
        self.assertIn("ops/s (log)", drawn)

    def test_engines_within_10x_keep_their_own_linear_scales(self) -> None:
        text, drawn = self.overview(self.runs(2.0, "memory"), "overview-linear.html")
        self.assertIn("one panel each on its own linear scale", text)
        self.assertNotIn("logarithmic", text)
        self.assertNotIn("ops/s (log)", drawn)


class RepeatsTest(unittest.TestCase):
    def test_each_summary_row_names_its_file_and_repeat(self) -> None:
        # Two files of one engine with two repeats each: four rows of "<engine> fillseq".
        doc = load_json(next(iter(RUNS.values())))
        doc["results"] = [dict(copy.deepcopy(r), repeat=k, repeats=2)
                          for r in doc["results"] for k in (1, 2)]
        a = write_json(os.path.join(TMP, "rep-a.json"), doc)
        b = write_json(os.path.join(TMP, "rep-b.json"), doc)
        out = os.path.join(TMP, "repeats.html")
        p = kvb("report", "--html", out, a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, rows = summary_rows(read(out))
        self.assertEqual(header[:2], ["file", "repeat"])
        fill = [(r[0], r[1]) for r in rows if r[3] == "fillseq"]
        self.assertEqual(sorted(fill), [("rep-a.json", "1/2"), ("rep-a.json", "2/2"),
                                        ("rep-b.json", "1/2"), ("rep-b.json", "2/2")])


class ColoursTest(unittest.TestCase):
    def test_an_engine_has_its_colour_on_every_page(self) -> None:
        from kvbtools.pages.figures import ENGINE_COLOURS
        if len(RUNS) < 2:
            self.skipTest("needs two engines")
        (e1, r1), (e2, r2) = list(RUNS.items())[:2]
        pages = {}
        for name, args in (("both", ["report", r1, r2]), ("alone", ["report", r2]),
                           ("reversed", ["report", r2, r1]), ("compare", ["compare", r1, r2])):
            out = os.path.join(TMP, f"colours-{name}.html")
            p = kvb(*args, "--html", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            pages[name] = read(out)
        for name in ("both", "alone", "reversed"):
            svg = figure_html(pages[name], "readrandom-latency")
            self.assertEqual(legend_colour(svg, e2), ENGINE_COLOURS[e2], name)
            if name != "alone":
                self.assertEqual(legend_colour(svg, e1), ENGINE_COLOURS[e1], name)
        # kvb compare labels the sides by engine: the ratio figure's point has the same colour.
        svg = figure_html(pages["compare"], "ratio-ops_per_sec")
        self.assertEqual(legend_colour(svg, e2), ENGINE_COLOURS[e2])

    def test_other_names_by_hash_not_by_order(self) -> None:
        from kvbtools.pages import figures
        names = ["x86-gcc-native", "x86-clang-native", "9.1.0", "rocksdb x86-gcc-native"]
        a, b = figures.Colours(names), figures.Colours(reversed(names))
        for n in names:
            self.assertEqual(a[n], b[n], n)
        engines = set(figures.ENGINE_COLOURS.values())
        self.assertFalse({a[n] for n in names[:3]} & engines)  # never an engine's colour
        self.assertEqual(len({a[n] for n in names}), len(names))  # none alike on a page
        alone = figures.Colours(["9.1.0"])["9.1.0"]
        self.assertEqual(alone, figures.colour_choices("9.1.0")[0])


class BadInputTest(unittest.TestCase):
    def html(self, *files: str) -> tuple[subprocess.CompletedProcess[str], str]:
        out = os.path.join(TMP, "bad.html")
        if os.path.exists(out):
            os.remove(out)
        p = kvb("report", "--html", out, *files)
        self.assertNotIn("Traceback", p.stderr)
        return p, read(out) if os.path.exists(out) else ""

    def run_doc(self) -> dict[str, Any]:
        return load_json(next(iter(RUNS.values())))

    def test_truncated_json_is_exit_2(self) -> None:
        path = os.path.join(TMP, "cut.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(read(next(iter(RUNS.values())))[:2000])
        p, page = self.html(path)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cut.json: not JSON", p.stderr)
        self.assertIn("truncated", p.stderr)
        self.assertEqual(page, "")

    def test_another_tools_json_is_exit_2(self) -> None:
        path = write_json(os.path.join(TMP, "other.json"), {"name": "ycsb", "runtime_ms": 5})
        p, page = self.html(path)
        self.assertEqual(p.returncode, 2)
        self.assertIn("neither a kvbench run document", p.stderr)

    def test_empty_interval_series_says_what_is_missing(self) -> None:
        doc = self.run_doc()
        for r in doc["results"]:
            for role in r["roles"]:
                role["intervals"]["series"] = []
        path = write_json(os.path.join(TMP, "noseries.json"), doc)
        p, page = self.html(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no interval samples", page)
        self.assertNotIn('id="fig-readrandom-throughput"', page)
        self.assertEqual(svg_count(page), expected_figures([path]))
        # A real run with sampling off says why.
        real = os.path.join(TMP, "nosampling.json")
        subprocess.run([ARGS.kvbench, "--engine=memory", f"--db={TMP}/db-m", "--num=1000",
                        "--report_interval_seconds=0", f"--json={real}"], check=True,
                       capture_output=True, timeout=120)
        p, page = self.html(real)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("sampling was off: --report_interval_seconds=0", page)

    def test_failed_engine_is_reported_with_what_it_kept(self) -> None:
        doc = self.run_doc()
        doc["complete"] = False
        doc["error"] = "engine failed: IO error: No space left on device"
        doc["results"] = doc["results"][:1]
        failed = write_json(os.path.join(TMP, "failed.json"), doc)
        empty = copy.deepcopy(doc)
        empty["results"] = []
        placeholder = write_json(os.path.join(TMP, "placeholder.json"), empty)
        p, page = self.html(failed, placeholder)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("failed.json is an incomplete run", p.stderr)
        self.assertIn("failed.json: the run did not complete: engine failed: IO error", page)
        self.assertIn("1 benchmark result(s) kept", page)
        self.assertIn("placeholder.json: the run did not complete", page)
        self.assertIn("nothing was measured", page)

    def test_mix_of_kvbench_and_micro_gives_both_sections(self) -> None:
        run = next(iter(RUNS.values()))
        p, page = self.html(run, MICRO)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 kvbench run(s) and 1 kvbench_micro run(s)", page)
        self.assertIn('id="fig-crc32c-gbps"', page)
        self.assertEqual(svg_count(page), expected_figures([run, MICRO]))

    def test_without_matplotlib_exit_2_and_other_commands_work(self) -> None:
        fake = os.path.join(TMP, "no-matplotlib")
        os.makedirs(os.path.join(fake, "matplotlib"), exist_ok=True)
        with open(os.path.join(fake, "matplotlib", "__init__.py"), "w") as f:
            f.write("raise ImportError('hidden by the test')\n")
        env = dict(os.environ, PYTHONPATH=fake)
        run = next(iter(RUNS.values()))
        for args in (["report", "--html", os.path.join(TMP, "x.html"), run],
                     ["report", "--png", os.path.join(TMP, "xpng"), run],
                     ["compare", run, run, "--html", os.path.join(TMP, "x.html")]):
            p = kvb(*args, env=env)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("apt-get install python3-matplotlib", p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(TMP, "x.html")))
        p = kvb("report", run, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = kvb("compare", run, kvbtest.rerun(run, os.path.join(TMP, "again.json")), env=env)
        self.assertEqual(p.returncode, 0, p.stderr)


def bucketed(lat: dict[str, Any], values: list[int]) -> dict[str, Any]:
    """latency_ns with the buckets kvbench's Histogram gives `values` (its layout: exact below
    256 ns, then 128 sub-buckets per power of two) and the percentiles it reports."""
    import math
    def bucket(v: int) -> tuple[int, int]:
        if v < 256:
            return v, v
        msb = v.bit_length() - 1
        shift = msb - 7
        low = (v >> shift) << shift
        return low, low + (1 << shift) - 1
    counts: dict[tuple[int, int], int] = {}
    for v in values:
        counts[bucket(v)] = counts.get(bucket(v), 0) + 1
    out = dict(lat, count=len(values), min=min(values), max=max(values),
               mean=sum(values) / len(values))
    out["buckets"] = [[lo, hi, n] for (lo, hi), n in sorted(counts.items())]
    out["hdr_layout"] = {"buckets": 57, "sub_buckets": 256}
    keys = {"p50": 50, "p75": 75, "p90": 90, "p95": 95, "p99": 99, "p99_9": 99.9,
            "p99_99": 99.99}
    for key, p in keys.items():
        want, seen = max(1, math.ceil(p / 100 * len(values))), 0
        for (lo, hi), n in sorted(counts.items()):
            seen += n
            if seen >= want:
                out[key] = min(max((lo + hi) / 2, out["min"]), out["max"])
                break
    return out


def parse_hgrm(text: str) -> tuple[list[tuple[float, float, int]], dict[str, float]]:
    rows, footer = [], {}
    for line in text.splitlines():
        m = re.match(r"#\[(\w+)\s*=\s*([\d.]+), ([\w ]+?)\s*=\s*([\d.]+)\]", line)
        if m:
            footer[m.group(1)] = float(m.group(2))
            footer[m.group(3).strip()] = float(m.group(4))
            continue
        parts = line.split()
        if len(parts) >= 3 and re.match(r"^[\d.]+$", parts[0]):
            rows.append((float(parts[0]), float(parts[1]), int(parts[2])))
    return rows, footer


def check_hgrm(test: unittest.TestCase, text: str, lat: dict[str, Any]) -> None:
    """The .hgrm's p50/p99/p99.9/max equal the JSON's to the histogram's resolution (a value
    is printed in us with 3 decimals: to the nanosecond)."""
    rows, footer = parse_hgrm(text)
    test.assertEqual([r[1] for r in rows], sorted(r[1] for r in rows))
    test.assertEqual(rows[-1][1], 1.0)
    test.assertEqual(rows[-1][2], lat["count"])
    by_p = {r[1]: r[0] for r in rows}
    for key, p in (("p50", 0.5), ("p99", 0.99), ("p99_9", 0.999)):
        test.assertAlmostEqual(by_p[p] * 1e3, lat[key], delta=0.6, msg=key)
    test.assertAlmostEqual(rows[-1][0] * 1e3, lat["max"], delta=0.6)
    test.assertAlmostEqual(footer["Max"] * 1e3, lat["max"], delta=0.6)
    test.assertEqual(footer["Total count"], lat["count"])
    test.assertEqual(footer["SubBuckets"], 256)
    test.assertAlmostEqual(footer["Mean"] * 1e3, lat["mean"], delta=0.6)


class HistoryTest(unittest.TestCase):
    def test_noisy_points_ringed_and_listed(self) -> None:
        # Six nights of one run in a store, the third and fifth noisy.
        store = os.path.join(TMP, "history.sqlite")
        files = []
        for i in range(6):
            doc = load_json(next(iter(RUNS.values())))
            doc["context"]["date_utc"] = f"2026-01-{10 + i:02d}T02:00:00Z"
            doc["context"]["environment"].update(noisy=i in (2, 4),
                                                 noisy_reason=NOISE if i in (2, 4) else "")
            files.append(write_json(os.path.join(TMP, f"night{i}.json"), doc))
        p = kvb("store", "add", "--store", store, *files)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(TMP, "history.html")
        p = kvb("history", "--store", store, "--html", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = html.unescape(read(out))
        top = page.index("point(s) from runs kvbench called noisy: ")
        self.assertLess(top, page.index("<h2"))
        self.assertRegex(page, r"noisy: [^;<]+ 2 of 6")
        self.assertIn("the run of 2026-01-12", page)
        self.assertIn('<a class="noisy" href="#noisy-runs">noisy: point 3, point 5</a>', page)
        self.assertEqual(page.count(NOISE), 2)  # two noisy runs, once each
        self.assertIn("a run kvbench called noisy", svg_texts(page))
        screenshot(self, out, os.path.join(TMP, "history-shot.png"))


class HgrmTest(unittest.TestCase):
    def test_synthetic_buckets_round_trip(self) -> None:
        import random
        rng = random.Random(7)
        doc = load_json(next(iter(RUNS.values())))
        values = [int(rng.lognormvariate(9, 1.2)) + 100 for _ in range(20000)]
        # A file from before kvbench wrote buckets: only one role has them.
        for r in doc["results"]:
            for ro in r["roles"]:
                ro["latency_ns"].pop("buckets", None)
        role = doc["results"][2]["roles"][0]
        role["latency_ns"] = bucketed(role["latency_ns"], values)
        path = write_json(os.path.join(TMP, "bucketed.json"), doc)
        out = os.path.join(TMP, "hgrm")
        p = kvb("export", "hgrm", path, "--out", out)
        # The other roles have no buckets: refused, naming them.
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no latency buckets for fillseq.writer", p.stderr)
        for r in doc["results"]:
            for ro in r["roles"]:
                ro["latency_ns"] = bucketed(ro["latency_ns"], values)
        write_json(path, doc)
        p = kvb("export", "hgrm", path, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        name = os.path.join(out, f"bucketed.{doc['results'][2]['benchmark']}.reader.hgrm")
        self.assertIn(name, p.stdout.split())
        text = read(name)
        self.assertTrue(text.startswith("       Value     Percentile TotalCount "
                                        "1/(1-Percentile)\n\n"))
        check_hgrm(self, text, role["latency_ns"])
        self.assertTrue(os.path.exists(os.path.join(out, "bucketed.fwdrangewhilewriting."
                                                         "writer.hgrm")))


class ComparisonPagesTest(unittest.TestCase):
    def micro_runs(self, scales: dict[str, tuple[float, float, float]] | None = None,
                   tag: str = "") -> list[str]:
        """Three sides from the real micro run: the base, 20% slower, the base again (control);
        6 repetitions each (jittered copies) of one process: the pages are judged with
        --repetitions-independent (compare.py's model), enough for the U test to call a change.
        `scales`: benchmark -> the three sides' factors instead of (1, 0.8, 1)."""
        data = load_json(MICRO)
        rows = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"
                and b.get("repetition_index") == 0]
        out = []
        for i in range(3):
            d = copy.deepcopy(data)
            # Each side another run (kvb compare refuses one document on two sides): the control
            # has the base's figures, measured at another time.
            d["context"]["date"] = f"2024-01-0{i + 1}T00:00:00+00:00"
            d["benchmarks"] = []
            for b in rows:
                scale = (scales or {}).get(b["name"], (1.0, 0.8, 1.0))[i]
                for k in range(6):
                    c = dict(b, repetition_index=k)
                    c["bytes_per_second"] = b["bytes_per_second"] * scale * (1 + 0.002 * k)
                    d["benchmarks"].append(c)
            out.append(write_json(os.path.join(TMP, f"side{tag}{i}.json"), d))
        return out

    def test_compare_html_has_ratio_and_gbps_figures(self) -> None:
        files = self.micro_runs()
        out = os.path.join(TMP, "cmp.html")
        p = kvb("compare", *files, "--label", "gcc", "--label", "clang", "--label", "control",
                "--html", out, "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertIn('id="fig-ratio-bytes_per_second"', page)
        self.assertIn('id="fig-crc32c-gbps"', page)
        self.assertEqual(svg_count(page), 2)
        texts = svg_texts(page)
        self.assertIn("0.800 slower", texts)  # the verdict beside the point
        self.assertTrue(any("control in grey" in t for t in texts))
        # Ratios within 10x: a linear axis; the medians beside each ratio.
        self.assertFalse(any("(log scale)" in t for t in texts))
        self.assertTrue(any(re.fullmatch(r"[0-9.,]+ → [0-9.,]+", t) for t in texts))
        screenshot(self, out, os.path.join(TMP, "compare-shot.png"))

    def test_wide_ratios_get_a_log_axis_and_zeros_stay_zeros(self) -> None:
        # 0.01x, 0 and "both 0" beside 0.8x: a log axis labelled as ratios, the medians of
        # both sides beside each ratio, a 0 never drawn or written as 1.00.
        files = self.micro_runs({"crc32c/table/256": (1.0, 0.01, 1.0),
                                 "crc32c/table/4096": (1.0, 0.0, 1.0),
                                 "crc32c/hw_3way/4096": (0.0, 0.0, 0.0)}, tag="w")
        out = os.path.join(TMP, "cmp-wide.html")
        p = kvb("compare", *files, "--label", "gcc", "--label", "clang", "--label", "control",
                "--html", out, "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        texts = svg_texts(figure_html(page, "ratio-bytes_per_second"))
        self.assertTrue(any("(log scale)" in t for t in texts), texts)
        for tick in ("0.01", "0.1", "1"):
            self.assertIn(tick, texts)
        self.assertIn("0.010 slower", texts)
        self.assertIn("0 slower", texts)
        self.assertIn("both 0", texts)
        self.assertTrue(any(re.fullmatch(r"[0-9.,]+ → 0", t) for t in texts))  # a 0 median
        self.assertIn("0 → 0", texts)

    def test_verdicts_without_a_decision_and_warnings(self) -> None:
        # A comparison with a verdict word the page has never seen and warnings (what the
        # comparison may carry): drawn as they are, grey and with their reason.
        files = self.micro_runs(tag="u")
        out = os.path.join(TMP, "undecided.html")
        note = "the rounds disagree: 3 say slower, 2 faster"
        warning = "not comparable, accepted with --allow-different: num 100000 vs 10000"
        p = subprocess.run([PYTHON, "-c", """if 1:
            import dataclasses, sys; sys.path.insert(0, sys.argv[1])
            from kvbtools.core import comparison, samples, stats
            from kvbtools.pages import result_pages
            out, note, warning, *files = sys.argv[2:]
            sides = [samples.load_side(label, [f]) for label, f in
                     zip(("gcc", "clang", "control"), files)]
            c = comparison.build(sides, stats.Judgement(0.05, 0.05),
                                 repetitions_independent=True)
            for x in c.cells:
                if x.side == "clang" and x.bench.endswith("hw_3way/4096"):
                    x.verdict = dataclasses.replace(x.verdict, better=None, word="undecided",
                                                    note=note)
            c.warnings = [warning]
            result_pages.write_comparison(out, c)""", SCRIPTS, out, note, warning, *files],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertLess(page.index(html.escape(warning, quote=True)), page.index('id="sides"'))
        self.assertIn(f'<td class="undecided" title="{html.escape(note, quote=True)}">'
                      "undecided</td>", page)
        self.assertEqual(page.count('class="undecided"'), 1)
        texts = svg_texts(figure_html(page, "ratio-bytes_per_second"))
        self.assertIn("0.800 undecided", texts)
        self.assertIn("0.800 slower", texts)
        self.assertIn("grey: no verdict (its word beside it)", texts)
        self.assertIn(f"undecided: {note} (clang crc32c/hw_3way/4096)",
                      caption(page, "ratio-bytes_per_second"))

    def test_plain_compare_pages_advise_no_matrix_flag_and_undecided_cells_look_alike(self) -> None:
        # A compare page told its reader to "rerun kvb matrix without --no-control"; a matrix
        # page without a control still says it. Undecided cells: the zebra stripe of every
        # other row covered their hatching.
        from kvbtools.core import comparison, samples, stats
        from kvbtools.pages import compare_figures, figures, htmlpage
        files = self.micro_runs(tag="p")
        out = os.path.join(TMP, "plain.html")
        p = kvb("compare", files[0], files[1], "--html", out, "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stderr)
        text = caption(read(out), "ratio-bytes_per_second")
        self.assertNotIn("kvb matrix", text)
        self.assertNotIn("--no-control", text)
        c = comparison.build([samples.load_side(n, [f]) for n, f in zip(("a", "b"), files)],
                             stats.Judgement(0.05, 0.05), repetitions_independent=True)
        measured = compare_figures.ratio_figure(c, "bytes_per_second", figures.Colours(["b"]),
                                                True)
        self.assertIn("rerun without --no-control", measured.caption)
        zebra = htmlpage.STYLE.index("tr:nth-child(even) td{background")
        hatch = htmlpage.STYLE.index("tr td.undecided{")
        self.assertGreater(hatch, zebra)  # as specific, and later: it wins on every row

    def test_wide_tables_and_pre_blocks_fit_the_column(self) -> None:
        # The summary table of three engines was wider than the page's column, and a <pre>
        # hid its long lines behind a scroll bar.
        from kvbtools.pages import htmlpage
        self.assertIn("fwdrangewhilewriting<wbr>[reader]",
                      htmlpage.table([["fwdrangewhilewriting[reader]", 1]], numeric=[1]))
        style = htmlpage.STYLE.replace("\n", "")
        self.assertRegex(style, r"table\{[^}]*max-width:100%")
        self.assertRegex(style, r"pre\{[^}]*white-space:pre-wrap")
        self.assertNotRegex(style, r"pre\{[^}]*overflow-x")

    def test_verdict_words_stay_clear_of_the_medians(self) -> None:
        # Words after a point near the axis's right end ran into the medians' column: they go
        # before the point (its interval) instead, when they fit there.
        from kvbtools.pages import compare_figures
        lims = (0.5, 2.0)
        self.assertEqual(compare_figures._label_side("0.98 undecided", 0.9, 1.1, lims, False),
                         (1.1, 5, "left"))
        self.assertEqual(compare_figures._label_side("1.92 undecided", 1.7, 1.99, lims, False),
                         (1.7, -5, "right"))
        self.assertEqual(compare_figures._label_side("1.9 undecided", 1.8, 1.99, lims, True),
                         (1.8, -5, "right"))

    def test_matrix_results_directory_gets_report_html(self) -> None:
        from kvbtools.core import comparison, results, samples, stats
        files = self.micro_runs()
        d = os.path.join(TMP, "matrix-x")
        os.makedirs(d)
        sides = []
        for label, f in zip(("x86-gcc-native", "x86-clang-native", "control"), files):
            dst = os.path.join(d, f"{label}.r1.json")
            shutil.copy(f, dst)
            sides.append(samples.load_side(label, [dst]))
        c = comparison.build(sides, stats.Judgement(0.05, 0.05), repetitions_independent=True)
        doc = comparison.to_json(c)
        doc.update(command="matrix", presets=["x86-gcc-native", "x86-clang-native"],
                   repeats=1, build_seconds={"x86-gcc-native": 60.0}, failed_builds=[],
                   library_version_mismatches=[])
        results.write_json(os.path.join(d, "matrix.json"), doc)
        # The hook at the end of kvb matrix, in the interpreter kvb uses (matplotlib).
        p = subprocess.run([PYTHON, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                            "from kvbtools.pages.result_pages import write_report; "
                            "print(write_report(sys.argv[2]))", SCRIPTS, d],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split()[-1], os.path.join(d, "report.html"))
        page = read(os.path.join(d, "report.html"))
        self.assertIn("kvb matrix: presets x86-gcc-native, x86-clang-native", page)
        self.assertIn('id="fig-ratio-bytes_per_second"', page)
        self.assertIn('id="fig-crc32c-gbps"', page)
        # The same page from the command line.
        out = os.path.join(TMP, "again.html")
        p = kvb("report", "--html", out, d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read(out), page)
        p = kvb("report", "--html", out, TMP)  # a directory of no kvb command
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a results directory of kvb matrix, versions or bisect", p.stderr)

    def bisect_directory(self) -> tuple[str, str, list[str]]:
        """A repository of 8 empty commits and the results directory kvb bisect would have
        written over it (steps out of history order, one of its runs noisy): (repo, dir,
        commits)."""
        repo = os.path.join(TMP, "repo")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e",
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        git = lambda *a: subprocess.run(["git", "-C", repo, *a], check=True, env=env,  # noqa
                                        capture_output=True, text=True).stdout.strip()
        os.makedirs(repo)
        git("init", "-q")
        commits = []
        for i in range(8):
            git("commit", "-q", "--allow-empty", "-m", f"c{i}")
            commits.append(git("rev-parse", "HEAD"))
        d = os.path.join(TMP, "bisect-x")
        os.makedirs(d)
        fast, slow = [100.0, 101.0, 99.0, 100.5], [60.0, 61.0, 59.0, 60.5]
        old, new = commits[0], commits[7]
        # What kvb bisect writes (records of kind endpoints, step, confirm), tested out of
        # history order; #6 compiles what #5 does and takes its verdict without a run.
        records = [
            {"kind": "endpoints", "old": old, "new": new, "values": {"old": fast, "new": slow}},
            {"kind": "step", "step": 1, "commit": commits[3], "verdict": "skip",
             "how": "does not build", "why": "cc failed"},
            {"kind": "step", "step": 2, "commit": commits[4], "verdict": "old",
             "how": "measured", "values": {"old": fast, "new": slow, "this": fast}},
            {"kind": "step", "step": 3, "commit": commits[6], "verdict": "new",
             "how": "same sources", "same_as": commits[5]},
            {"kind": "step", "step": 4, "commit": commits[5], "verdict": "new",
             "how": "measured", "values": {"old": fast, "new": slow, "this": slow}},
            {"kind": "confirm", "blamed": commits[5], "parent": commits[4],
             "values": {"old": fast, "new": slow, "parent": fast, "blamed": slow}}]
        with open(os.path.join(d, "steps.jsonl"), "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in records))
        write_json(os.path.join(d, "state.json"), {"schema": "kvb-bisect-state", "unit": "bytes/s",
                                             "better": "higher", "repo": repo, "old": old,
                                             "new": new, "metric": "bytes_per_second"})
        write_json(os.path.join(d, "bisect.json"), {
            "schema": "kvb-bisect", "schema_version": 2, "repo": repo, "old": old, "new": new,
            "first_new": commits[5], "confirmed": True, "metric": "bytes_per_second",
            "benchmark": "sum", "ending": "confirmed: it is the first new commit",
            "records": records, "totals": {"builds": 5, "text": COST}})
        # Its runs (DIR/runs/*.json), one of them noisy: said at the top and under the figure.
        os.makedirs(os.path.join(d, "runs"))
        run = next(iter(RUNS.values()))
        shutil.copy(noisy_copy(run, "bisect-noisy.json", True),
                    os.path.join(d, "runs", f"step.{commits[4][:12]}.r1.json"))
        shutil.copy(noisy_copy(run, "bisect-quiet.json", False),
                    os.path.join(d, "runs", f"step.{commits[5][:12]}.r1.json"))
        return repo, d, commits

    def test_bisect_directory(self) -> None:
        repo, d, commits = self.bisect_directory()
        out = os.path.join(TMP, "bisect.html")
        p = kvb("report", "--html", out, d)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertEqual(svg_count(page), 1)
        said = html.unescape(page).index(f"1 of the 2 runs in runs/ were noisy "
                                         f"(step.{commits[4][:12]}.r1.json), e.g. {NOISE}")
        self.assertLess(said, page.index("<svg"))
        self.assertIn(f'<a class="noisy" href="#noisy-runs">noisy: step.{commits[4][:12]}.r1.json'
                      "</a>", figure_html(page, "bisect-commits"))
        self.assertEqual(html.unescape(page).count(NOISE), 1)
        texts = svg_texts(page)
        ticks = [t for t in texts if re.fullmatch(r"[0-9a-f]{8}", t)]
        # History order, not the order tested.
        self.assertEqual(ticks, [c[:8] for c in (commits[0], commits[3], commits[4],
                                                 commits[5], commits[6], commits[7])])
        self.assertIn(f"first new: {commits[5][:10]} (confirmed), its parent "
                      f"{commits[4][:10]}", texts)
        self.assertLess(html.unescape(page).index(f"cost: {COST}"), page.index("<svg"))
        for label in ("like old", "like new", "did not build or run",
                      "same sources as a judged commit"):
            self.assertIn(label, texts)
        # No instruction was counted: one panel, time's; every judged commit in the table,
        # with its place by time (#6 none: it took #5's verdict without a run).
        self.assertIn("time: place", texts)
        self.assertNotIn("instructions: place", texts)
        rows = re.findall(r"<tr><td[^>]*>([^<]*)</td><td>([0-9a-f]{12})</td><td>([^<]*)</td>"
                          r"<td>([^<]*)</td><td[^>]*>([^<]*)</td>", page)
        self.assertEqual([(r[1], r[2], r[3], r[4]) for r in rows], [
            (commits[0][:12], "like old", "old and new", "0%"),
            (commits[3][:12], "skip", "does not build", ""),
            (commits[4][:12], "like old", "time", "0%"),
            (commits[5][:12], "like new", "time", "100%"),
            (commits[6][:12], "like new", f"same sources as {commits[5][:12]}", ""),
            (commits[7][:12], "like new", "old and new", "100%")])
        # A bisect that counted instructions itself (--instructions): its series are
        # instruction counts, and the panel, the table's verdicts and its column say so.
        doc = json.loads(read(os.path.join(d, "bisect.json")))
        write_json(os.path.join(d, "bisect.json"), dict(doc, metric="instructions_per_byte"))
        self.assertEqual(kvb("report", "--html", out, d).returncode, 0)
        counted = read(out)
        self.assertIn("instructions: place", svg_texts(counted))
        self.assertNotIn("time: place", svg_texts(counted))
        self.assertIn(">place by instructions</th>", counted)
        self.assertIn(f"<td>{commits[5][:12]}</td><td>like new</td><td>instructions</td>",
                      counted)
        write_json(os.path.join(d, "bisect.json"), doc)
        # Still running, the repository gone: drawn as far as it got, and said so.
        os.remove(os.path.join(d, "bisect.json"))
        shutil.rmtree(repo)
        p = kvb("report", "--html", out, d)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertIn("no first new commit was named", page)
        self.assertIn("in the order they were tested", page)


if __name__ == "__main__":
    kvbtest.main("kvbench", "micro", "engines")
