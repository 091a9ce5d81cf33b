"""The pages of comparisons (docs/report.md): `kvb compare --html`, and the report.html that
kvb matrix (presets or a study), versions and bisect leave in their results directory (`write_report(dir)`, which
also regenerates one: `kvb report --html OUT RESULTS_DIR`).
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from typing import Any, Callable

from kvbtools.core import comparison, compiled, levels, profiles, results, samples
from kvbtools.core import architectures, metrics, stats
from kvbtools.core.comparison import Cell
from kvbtools.pages import bisect_figures, compare_figures, figures, flame_figures, htmlpage
from kvbtools.pages import noise
from kvbtools.core.comparison import Comparison
from kvbtools.core.errors import RunError, UsageError
from kvbtools.pages.htmlpage import Page, esc
from kvbtools.pages.report_html import add_micro_figures
from kvbtools.pages.study_figures import study_page

KINDS = ("matrix", "versions", "bisect", "study")


def comparison_page(c: Comparison, title: str, intro: str = "", measured: bool = False) -> Page:
    """The page of a comparison; measured: kvb matrix or versions measured its sides (so a
    missing control series can be advised)."""
    page = Page(title)
    if intro:
        page.para(intro, "muted")
    # What the comparison itself warns of (sides accepted as not comparable, ...), then noise.
    warnings = [str(w) for w in getattr(c, "warnings", [])]
    if warnings:
        page.html(htmlpage.box("Warnings", warnings, bad=True))
    noisy = noise.side_warnings(c.sides)
    if noisy:
        page.html(htmlpage.noise_box(noisy))
    control = compare_figures.CONTROL if any(s.label == compare_figures.CONTROL
                                             for s in c.sides) else ""
    rows = []
    for s in c.sides:
        presets = sorted({samples.context_preset(ctx) for ctx in s.contexts} - {""})
        role = "base" if s is c.sides[0] else ("control: the base measured again"
                                               if s.label == control else "")
        rows.append([s.label, role, len(s.paths), ", ".join(presets),
                     ", ".join(os.path.basename(p) for p in s.paths[:3])
                     + (" ..." if len(s.paths) > 3 else "")])
    page.heading(2, "Sides", "sides")
    page.html(htmlpage.table(rows, ["side", "", "files", "preset", "paths"], numeric=[2]))
    colours = figures.Colours(s.label for s in c.sides[1:] if s.label != control)
    page.heading(2, "Ratios to the base", "ratios")
    for mkey in c.benches:
        if not any(x.metric.key == mkey for x in c.cells):
            # Benchmarks that only one side measured: no ratio to draw (the tables show them).
            page.para(f"{c.metrics[mkey].path}: no benchmark in both the base and another side: "
                      "no ratio to draw", "muted")
            continue
        page.figure(compare_figures.ratio_figure(c, mkey, colours, measured))
        page.html(verdict_table(c, mkey))
    if c.sides[0].kind == results.GBENCH:
        page.heading(2, "GB/s by block size", "gbps")
        add_micro_figures(page, [s for s in c.sides if s.label != control])
    page.heading(2, "Tables", "tables")
    page.html(f"<pre>{esc(comparison.format_comparison(c, control=control, reasons=False))}"
              "</pre>")
    return page


def verdict_table(c: Comparison, mkey: str) -> str:
    """Every point of a ratio figure as a row: both medians, the ratio (its estimator in the
    column's name: comparison.ratio_meaning), the verdict as its word
    (any word: a regression red, no verdict grey and hatched, its reason in the tooltip)."""
    metric = c.metrics[mkey]
    base = c.sides[0].label
    rows = []
    for cell in (x for x in c.cells if x.metric.key == mkey):
        b, o = compare_figures.medians(cell)
        v = cell.verdict
        rows.append([cell.bench, cell.side, compare_figures.value_text(b * metric.scale),
                     compare_figures.value_text(o * metric.scale),
                     compare_figures.ratio_text(cell),
                     htmlpage.Td(v.word, _verdict_class(cell), v.note),
                     comparison.fmt_p(v.test.p) if v.test is not None else ""])
    ratio = comparison.ratio_meaning([x for x in c.cells if x.metric.key == mkey], short=True)
    return htmlpage.table(rows, ["benchmark", "side", f"{base}: median [{metric.shown_unit}]",
                                 f"side: median [{metric.shown_unit}]", f"ratio ({ratio})",
                                 "verdict", "p"], numeric=[2, 3, 4])


def _verdict_class(cell: Cell) -> str:
    kind = compare_figures.decided(cell)
    if kind == "other":
        return "undecided"
    if kind == "change":
        return "worse" if cell.verdict.regression else "better"
    return ""


def write_comparison(path: str, c: Comparison, svg_dir: str | None = None,
                     png_dir: str | None = None,
                     extra: Callable[[Page], None] | None = None) -> int:
    """kvb compare --html: the page of a comparison (and `extra`'s sections); the number of
    figures."""
    figures.pyplot("kvb compare --html")
    page = comparison_page(c, "kvb compare", f"{len(c.sides)} sides; base {c.sides[0].label}")
    if extra is not None:
        extra(page)
    return page.write(path, figures.Output(svg_dir, png_dir))


# ---- results directories ---------------------------------------------------------------------

def _kind(directory: str) -> str:
    for k in KINDS:
        if os.path.exists(os.path.join(directory, f"{k}.json")) or (
                k == "bisect" and os.path.exists(os.path.join(directory, "steps.jsonl"))):
            return k
    raise UsageError(f"{directory}: not a results directory of kvb matrix, versions or bisect "
                     "(no matrix.json, study.json, versions.json, bisect.json or steps.jsonl)")


def _file(directory: str, path: str) -> str:
    """A run file named in a results document, found where it is or beside the document."""
    if os.path.exists(path):
        return path
    return os.path.join(directory, os.path.basename(path))


def _rounds(directory: str, doc: dict[str, Any]) -> dict[str, levels.Where]:
    """Each run's link, round and host as kvb matrix and versions recorded them ("runs"), by the
    path its file is found at: the verdicts pair them by round again, as the table did."""
    out = {}
    for x in doc.get("runs", []) if isinstance(doc.get("runs"), list) else []:
        path = _file(directory, x["file"])
        out[path] = levels.Where(x["link"], path, x["round"], x.get("host", ""))
    return out


def page_for_dir(directory: str) -> Page:
    kind = _kind(directory)
    if kind == "bisect":
        return bisect_page(directory)
    if kind == "study":
        return study_page(directory)
    doc = results.read_json(os.path.join(directory, f"{kind}.json"))
    if not isinstance(doc, dict) or doc.get("schema") != "kvb-comparison":
        raise UsageError(f"{directory}/{kind}.json: not a kvb {kind} results document")
    sides = [samples.load_side(s["label"], [_file(directory, f) for f in s["files"]],
                               _rounds(directory, doc))
             for s in doc["sides"]]
    wanted = {(r["metric"], r["benchmark"]) for r in doc.get("rows", [])}
    c = comparison.build(sides, stats.Judgement(doc["threshold"], doc["alpha"]),
                         metric_keys=sorted({m for m, _ in wanted}) or None)
    if wanted:  # the rows the command kept (its --filter)
        c.benches = {m: [b for b in names if (m, b) in wanted] for m, names in c.benches.items()}
        c.benches = {m: names for m, names in c.benches.items() if names}
        c.cells = [x for x in c.cells if (x.metric.key, x.bench) in wanted]
    what = {"matrix": f"presets {', '.join(doc.get('presets', []))}",
            "versions": f"{doc.get('dep', '')} {', '.join(doc.get('versions', []))}"}[kind]
    cost = doc.get("cost")
    how = f"cost: {cost['text']}" if isinstance(cost, dict) and "text" in cost else \
        f"{doc.get('repeats', '?')} rounds, interleaved"
    page = comparison_page(c, f"kvb {kind}: {what}", f"results directory {directory}; {how}"
                           + (f"; cpu: {doc['cpu']['how']}" if isinstance(doc.get("cpu"), dict)
                              else ""), measured=True)
    notes = [f"build of {b} failed: not measured" for b in doc.get("failed_builds", [])]
    notes += doc.get("library_version_mismatches", [])
    if notes:
        page.blocks.insert(1, htmlpage.box("Missing or suspect", notes, bad=True))
    control = (compare_figures.CONTROL,)
    built = compiled.origin_lines(c, control) + compiled.note_lines(c, control)
    if built:  # where each side's libraries came from; rows no build compiled (docs/compare.md)
        page.blocks.insert(1, htmlpage.box("What the builds compiled", built))
    # kvbench --profile runs (--profile, or --kvbench-arg=--profile): where the CPU time moved.
    flame_figures.add_diff_sections(
        page, [profiles.of_documents(results.load_all(s.paths)) for s in sides],
        [s.label for s in sides])
    times = doc.get("build_seconds", {})
    if times:
        page.para("build times: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()),
                  "muted")
    return page


def _history(repo: Any, old: str, new: str, tested: list[bisect_figures.Judged]
             ) -> tuple[list[str], str]:
    """The commits from old to new in history order, from the repository when it is still
    there; else the judged commits in the order they were judged, and why.

    The commits are those the bisect chose from (reachable from new, not from old: `git
    rev-list new --not old`), not only old's descendants (--ancestry-path): when old sits on a
    release branch merged into new's history, --ancestry-path leaves out every commit of the
    main line and the figure would show only the two ends. A judged commit the list still lacks
    is placed before new."""
    if repo and old and new:
        p = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "--topo-order", new,
                            "--not", old], capture_output=True, text=True)
        if p.returncode == 0:
            order = [old, *(c for c in p.stdout.split() if c != new)]
            seen = set(order)
            order += [t.commit for t in tested if t.commit not in seen and t.commit != new]
            return list(dict.fromkeys(order + [new])), ""
    order = [old] if old else []
    order += [t.commit for t in tested if t.commit not in (old, new)]
    return order + ([new] if new else []), (
        f"the repository {repo} cannot be read: commits are in the order they were tested, "
        "not in history order")


def bisect_page(directory: str) -> Page:
    # state.json (written first) has the metric's unit; bisect.json (written at the end) the
    # records and the first new commit; steps.jsonl grows while the search runs.
    doc: dict[str, Any] = {}
    for name in ("state.json", "bisect.json"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            part = results.read_json(path)
            if isinstance(part, dict):
                doc.update(part)
    records = doc.get("records", doc.get("steps"))
    if not isinstance(records, list):
        records = _jsonl(os.path.join(directory, "steps.jsonl"))
    records = [r for r in records if isinstance(r, dict)]
    tested = bisect_figures.judged_commits(doc, records)
    old = str(doc.get("old") or doc.get("good") or "")
    new = str(doc.get("new") or doc.get("bad") or "")
    order, why = _history(doc.get("repo"), old, new, tested)
    mkey = str(doc.get("metric") or "")
    first = str(doc.get("first_new") or doc.get("first_bad") or "")
    confirmed = bool(doc.get("confirmed", bool(doc.get("first_bad"))))
    parent = next((str(r.get("parent") or "") for r in records
                   if r.get("kind") == "confirm" and r.get("blamed") == first), "")
    page = Page(f"kvb bisect: {doc.get('benchmark', '')} {mkey}")
    page.para(f"results directory {directory}; repository {doc.get('repo', '?')}, old "
              f"{old[:12]}, new {new[:12]}" + (f", find {doc['find']}" if doc.get("find")
                                               else ""), "muted")
    totals = doc.get("totals")   # where the time went (docs/compare.md, What it costs)
    if isinstance(totals, dict) and totals.get("text"):
        page.para(f"cost: {totals['text']}", "muted")
    notes = [why] if why else []
    ending = doc.get("ending") or _text(os.path.join(directory, "summary.txt")).strip()
    if not first:
        notes.append("no first new commit was named" + (f" ({ending})" if ending else
                                                        " (the bisection did not finish)")
                     + ": the figure shows the commits judged so far")
    elif ending:
        page.para(ending)
    if notes:
        page.html(htmlpage.box("Missing", notes, bad=True))
    runs, noisy = noise.file_reasons(sorted(glob.glob(os.path.join(directory, "runs",
                                                                     "*.json"))))
    if noisy:
        page.html(htmlpage.noise_box([_noisy_runs(runs, noisy)]))
    if tested and order:
        measured = metrics.series_word(str(doc.get("metric") or ""))
        fig = bisect_figures.bisect_figure(tested, order, first, parent, confirmed, measured)
        fig.noisy = noisy
        page.figure(fig)
        page.html(bisect_figures.judged_table(tested, order, measured))
    text = _text(os.path.join(directory, "bisect.txt"))
    if text:
        page.html(f"<pre>{esc(text)}</pre>")
    return page


def _noisy_runs(n: int, noisy: dict[str, str]) -> str:
    """How many of the bisect's `n` runs (DIR/runs/*.json) kvbench called noisy (file name ->
    why), and which."""
    names = ", ".join(list(noisy)[:6]) + (" ..." if len(noisy) > 6 else "")
    return (f"{len(noisy)} of the {n} runs in runs/ were noisy ({names}), e.g. "
            f"{next(iter(noisy.values()))}: their values may be low and pull a commit's "
            "verdict")


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _jsonl(path: str) -> list[Any]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        print(f"kvb: warning: {path}:{n}: not JSON, left out", file=sys.stderr)
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    return out


def write_architectures(directory: str, measured: list[architectures.ArchComparison]) -> str:
    """DIR/report.html of a matrix of several architectures (commands/matrix.py): the
    architectures side by side, each labelled by its nodes and CPUs, and a link to each one's
    own report."""
    page = htmlpage.Page("kvb matrix: " + ", ".join(m.arch for m in measured))
    page.para(architectures.HEADING)
    page.html("<ul>" + "".join(
        f'<li><a href="{htmlpage.esc(m.arch)}/report.html">{htmlpage.esc(m.arch)}</a>: '
        f"{htmlpage.esc(m.hosts())}</li>" if m.doc is not None else
        f"<li>{htmlpage.esc(m.arch)}: {htmlpage.esc(m.hosts())}</li>" for m in measured)
        + "</ul>")
    for head, rows in architectures.blocks(measured):
        page.html(htmlpage.table(rows, head, numeric=range(1, len(head))))
    path = os.path.join(directory, "report.html")
    page.write(path, figures.Output())
    print(f"report: {path}")
    return path


def write_report(directory: str) -> str | None:
    """The hook at the end of kvb matrix, versions and bisect: DIR/report.html. Without
    matplotlib, or when the page cannot be made, says so and returns None; the command's own
    results stand."""
    path = os.path.join(directory, "report.html")
    try:
        figures.pyplot("report.html")
        page_for_dir(directory).write(path, figures.Output())
    except (UsageError, RunError) as e:
        print(f"kvb: report.html not written: {e}", file=sys.stderr)
        return None
    print(f"report: {path}")
    return path
