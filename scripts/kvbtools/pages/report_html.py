"""`kvb report --html`: one self-contained page over kvbench and kvbench_micro result files
(docs/report.md): what is missing, which runs were noisy, the summary table and an overview, the
context of every run, then per benchmark and role the throughput over time, the latency
distribution and the cost per operation, and GB/s against block size for kvbench_micro files.
The summary comes first, then the context: what a number means depends on both.
"""
from __future__ import annotations

import os
from typing import Any

from kvbtools.core import environment, hgrm, results, samples, summary
from kvbtools.pages import figures, flame_figures, htmlpage, micro_figures, run_figures
from kvbtools.pages.htmlpage import Page, esc
from kvbtools.core.results import Document
from kvbtools.pages.run_figures import Group, Run

GIB = 1073741824.0


def build(docs: list[Document], title: str = "kvbench report") -> Page:
    kv = [d for d in docs if d.kind == results.KVBENCH]
    micro = [d for d in docs if d.kind == results.GBENCH]
    page = Page(title)
    what = []
    if kv:
        what.append(f"{len(kv)} kvbench run(s)")
    if micro:
        what.append(f"{len(micro)} kvbench_micro run(s)")
    page.para(f"{' and '.join(what)}: " + ", ".join(d.path for d in docs), "muted")
    problems = _problems(kv)
    if problems:
        page.html(htmlpage.box("Missing or failed", problems, bad=True))
    noisy = _noisy(kv, micro)
    if noisy:
        page.html(htmlpage.noise_box(noisy))
    if kv:
        _kv_sections(page, kv)
        flame_figures.add_profile_sections(page, kv)  # kvbench --profile runs
    if micro:
        _micro_sections(page, micro)
    return page


def _problems(kv: list[Document]) -> list[str]:
    out = []
    old = [os.path.basename(d.path) for d in kv
           if any(int(role["latency_ns"].get("count", 0)) > 0
                  and not hgrm.has_buckets(role["latency_ns"])
                  for _, _, role in results.occurrences(d.doc))]
    if old:
        out.append(f"{', '.join(old)}: no latency histogram buckets (written by a kvbench that "
                   "did not keep them): the latency figures go through the reported percentiles "
                   "(p50 ... p99.99, max) only, and kvb export hgrm cannot export them")
    for d in kv:
        doc = d.doc
        if not doc["complete"]:
            n = len(doc["results"])
            out.append(f"{d.path}: the run did not complete: {doc.get('error', '')} "
                       f"({n} benchmark result(s) kept" + ("; nothing was measured)" if n == 0
                                                           else ", shown below)"))
    return out


def _noisy(kv: list[Document], micro: list[Document]) -> list[str]:
    """A line per run kvbench called noisy, and per kvbench_micro file whose wall time ran
    well above its CPU time."""
    runs = []
    for r in run_figures.label_runs(kv):
        name = os.path.basename(r.doc.path)
        runs.append((r.label if name in r.label else f"{r.label} ({name})", r.doc.context))
    return environment.noisy_runs(runs, micro_sides(micro))


# ---- kvbench runs ----------------------------------------------------------------------------

def _kv_sections(page: Page, kv: list[Document]) -> None:
    runs = run_figures.label_runs(kv)
    colours = run_figures.colours_for(runs)
    gs = run_figures.groups(runs)
    page.heading(2, "Summary", "summary")
    rows, header = _summary(runs, gs)
    if rows:  # numeric: kvb report's columns 2 to 9 (ops/s ... db MB), after the lead ones
        lead = len(header) - len(summary.COLUMNS)
        page.html(htmlpage.table(rows, header, numeric=range(lead + 2, lead + 10)))
    else:
        page.para("No benchmark results in these files.")
    ov = run_figures.overview(gs, colours)
    if ov is not None:
        page.figure(ov)
    _context(page, runs)
    for g in gs:
        _group_section(page, g, colours)


def _summary(runs: list[Run], gs: list[Group]) -> tuple[list[list[str]], list[str]]:
    """kvb report's table, by benchmark, then run and repeat, so the engines' lines of one
    benchmark sit together; a row says its file (when there are several) and its repeat, and a
    noisy run's rows say so in their notes."""
    order = {(g.step.split("-")[0], g.role): i for i, g in enumerate(gs)}
    several = len(runs) > 1
    keyed = []
    for r in runs:
        noisy = bool(environment.noisy_reason(r.doc.context))
        for row in results.rows(r.doc.doc):
            cells = summary.cells(row, noisy)
            lead = summary.lead(row, os.path.basename(r.doc.path), several, True)
            keyed.append((order.get((row.benchmark, row.role), len(order)), lead + cells))
    rows = [cells for _, cells in sorted(keyed, key=lambda k: k[0])]
    return rows, summary.lead_header(several, True) + summary.COLUMNS


def _group_section(page: Page, g: Group, colours: figures.Colours) -> None:
    page.heading(2, g.label, "b-" + g.name)
    figs, notes = [], []
    for make in (run_figures.throughput, run_figures.latency, run_figures.cost):
        fig, more = make(g, colours)
        notes.extend(more)
        if fig is not None:
            figs.append(fig)
    pacing = [_pacing_note(e) for e in g.entries if e.role.get("pacing")]
    if pacing:
        page.html("<ul>" + "".join(f"<li>{esc(p)}</li>" for p in pacing) + "</ul>")
    if notes:
        page.html(htmlpage.box("Not shown", notes))
    for f in figs:
        page.figure(f)


def _pacing_note(e: run_figures.Entry) -> str:
    p = e.role["pacing"]
    if not p.get("target_bytes_per_sec"):
        return f"{e.run.label}: the writer was not paced"
    word = "sustained" if p.get("sustained") else "did NOT sustain"
    return (f"{e.run.label}: the writer {word} its target, "
            f"{p['achieved_bytes_per_sec'] / 1048576:.2f} of "
            f"{p['target_bytes_per_sec'] / 1048576:.2f} MB/s")


def _context(page: Page, runs: list[Run]) -> None:
    page.heading(2, "Context", "context")
    # One cell across the runs where they agree (host, compiler, ...): differences stand out.
    out = ['<table class="kv">', "<tr><th></th>"
           + "".join(f"<th>{esc(r.label)}</th>" for r in runs) + "</tr>"]
    for name, key in CONTEXT_ROWS:
        cells = [_field(r.doc.doc["context"], r.doc, key) for r in runs]
        if len(runs) > 1 and len(set(cells)) == 1:
            row = f'<td colspan="{len(runs)}">{esc(cells[0])}</td>'
        else:
            row = "".join(f"<td>{esc(c)}</td>" for c in cells)
        out.append(f"<tr><th>{esc(name)}</th>{row}</tr>")
    page.html("\n".join(out + ["</table>"]))
    page.heading(3, "Libraries (as loaded)")
    page.html(htmlpage.table(*_libraries(runs)))
    warnings: dict[str, list[str]] = {}
    for r in runs:
        for w in r.doc.doc["context"].get("warnings", []):
            msg = w.get("message", str(w)) if isinstance(w, dict) else str(w)
            kind = w.get("kind", "") if isinstance(w, dict) else ""
            warnings.setdefault(f"{kind}: {msg}" if kind else msg, []).append(r.label)
    if warnings:
        items = [f"{m} [{'all runs' if len(who) == len(runs) > 1 else ', '.join(who)}]"
                 for m, who in warnings.items()]
        page.html(htmlpage.box("Warnings (build audit and environment)", items))


CONTEXT_ROWS = [("file", "_file"), ("date (UTC)", "date_utc"), ("host", "hostname"),
                ("CPU", "_cpu"), ("memory", "_memory"), ("kernel", "kernel"),
                ("clock", "clock"), ("compiler", "_compiler"), ("flags", "build.cxx_flags"),
                ("preset", "_preset"), ("kvbench", "_kvbench"), ("engine", "_engine"),
                ("engine memory", "_engine_memory"), ("workload", "_workload"),
                ("command line", "command_line"),
                ("complete", "_complete")]


def _field(ctx: dict[str, Any], d: Document, key: str) -> str:
    b = ctx.get("build", {})
    w = ctx.get("workload", {})
    e = ctx.get("engine", {})
    special = {
        "_file": lambda: os.path.basename(d.path),
        "_cpu": lambda: f"{ctx.get('cpu_model', '')}, {ctx.get('cpu_cores', '?')} cores"
                        + (f", caches {ctx['cpu_caches']}" if ctx.get("cpu_caches") else ""),
        "_memory": lambda: f"{ctx.get('memory_bytes', 0) / GIB:.1f} GiB",
        "_compiler": lambda: f"{b.get('compiler_id', '')} {b.get('compiler_version', '')}",
        "_preset": lambda: f"{b.get('preset', '')}, {b.get('build_type', '')}, "
                           f"{b.get('target_arch', '')}"
                           + (", assertions ON" if b.get("assertions") else ""),
        "_kvbench": lambda: f"{b.get('kvbench_version', '')} (git {b.get('git_revision', '')})",
        "_engine": lambda: f"{e.get('name', '')} {e.get('version', '')}"
                           + (" (REFERENCE engine)" if e.get("reference") else ""),
        "_workload": lambda: (f"--num={w.get('num')} keys of {w.get('key_size')} B, values "
                              f"{w.get('value_size')} B (compression ratio "
                              f"{w.get('compression_ratio')}), {w.get('threads')} thread(s), "
                              f"seed {w.get('seed')}, compression {w.get('compression')}"
                              + (", sync" if w.get("sync") else "")),
        "_engine_memory": lambda: engine_memory(ctx),
        "_complete": lambda: "yes" if d.doc["complete"] else f"NO: {d.doc.get('error', '')}",
    }
    if key in special:
        return special[key]()
    v: Any = ctx
    for part in key.split("."):
        v = v.get(part, "") if isinstance(v, dict) else ""
    return str(v)


def _mib(v: object) -> str:
    return f"{int(str(v)) / 1048576:.0f} MiB"


def _bytes(v: object) -> bool:
    return str(v).isdigit()


def engine_memory(ctx: dict[str, Any]) -> str:
    """The memory the engine was given, in its own words (context.engine.config): the split of
    --memory_budget its adapter made, or the cache --cache_size set; what an engine says of a
    cache it does not have (LMDB: none of its own, the OS page cache of its map) is shown as it
    says it, never as a cache of that size. A file without the engine's config (an older
    kvbench) gives the flag, and says that is all it gives."""
    engine = ctx.get("engine") or {}
    cfg = engine.get("config") if isinstance(engine.get("config"), dict) else None
    if cfg is None:
        w = ctx.get("workload", {})
        return (f"--cache_size {_mib(w.get('cache_size_bytes', 0))} (what the engine made of "
                "it is not recorded)")
    parts = []
    if _bytes(cfg.get("memory_budget")):
        shares = [f"{k.split('.', 1)[1].replace('_', ' ')} {_mib(v)}" for k, v in cfg.items()
                  if k.startswith("memory_budget.") and ".sets." not in k and _bytes(v)]
        parts.append(f"--memory_budget {_mib(cfg['memory_budget'])}"
                     + (": " + ", ".join(shares) if shares else ""))
    else:
        parts += [f"{k.removesuffix('_bytes').replace('_', ' ')} {_mib(v)}"
                  for k, v in cfg.items() if "cache" in k and _bytes(v)]
    # A cache setting the engine answered in words ("ignored: lmdb has no cache; ...").
    parts += [f"{k}: {v}" for k, v in cfg.items() if "cache" in k and not _bytes(v)
              and str(v) not in ("true", "false") and not k.startswith("memory_budget")]
    return "; ".join(parts) or "no cache of its own (its configuration names none)"


def _libraries(runs: list[Run]) -> tuple[list[list[str]], list[str]]:
    """One row per distinct library build, with the runs that loaded it."""
    rows: dict[tuple[str, ...], list[str]] = {}
    for r in runs:
        for lib in r.doc.doc["context"].get("libraries", []):
            where = lib.get("package") or lib.get("prefix") or lib.get("source_dir") or ""
            build = " ".join(x for x in (lib.get("build_compiler", ""),
                                         lib.get("build_flags", "")) if x)
            flags = ", ".join(f for f, on in (("assertions", lib.get("assertions")),
                                              ("debug info", lib.get("debug_info"))) if on)
            key = (lib.get("name", ""), lib.get("version", ""), lib.get("origin", ""), where,
                   build, flags, lib.get("notes", ""), lib.get("path", ""))
            rows.setdefault(key, []).append(r.label)
    out = []
    for key, who in rows.items():
        out.append([*key, "all" if len(who) == len(runs) else ", ".join(who)])
    return out, ["library", "version", "origin", "package / prefix / source", "built with",
                 "built", "notes", "loaded from", "runs"]


# ---- kvbench_micro runs ----------------------------------------------------------------------

def micro_sides(micro: list[Document]) -> list[samples.Side]:
    """A side per file, labelled by its preset when the presets tell them apart."""
    presets = [samples.context_preset(d.context) for d in micro]
    use = all(presets) and len(set(presets)) == len(presets)
    labels = presets if use else [os.path.basename(d.path) for d in micro]
    if len(set(labels)) < len(labels):
        labels = [f"{i + 1}:{lab}" for i, lab in enumerate(labels)]
    return [samples.side_of(lab, [d]) for lab, d in zip(labels, micro)]


def _micro_sections(page: Page, micro: list[Document]) -> None:
    page.heading(2, "kvbench_micro", "micro")
    sides = micro_sides(micro)
    rows = []
    for s, d in zip(sides, micro):
        c = d.context
        rows.append([s.label, d.path, c.get("kvbench_compiler", ""),
                     c.get("kvbench_cxx_flags", ""), c.get("host_name", ""),
                     c.get("date", "")])
    page.html(htmlpage.table(rows, ["side", "file", "compiler", "flags", "host", "date"]))
    for s, d in zip(sides, micro):  # kvb report's table of each file
        page.para(f"{s.label}: {summary.micro_context(d.context)}")
        page.html(htmlpage.table(summary.micro_rows(d.doc), summary.MICRO_COLUMNS,
                                 numeric=range(1, 6)))
    page.para(summary.MICRO_NOTE, "muted")
    add_micro_figures(page, sides)


def add_micro_figures(page: Page, sides: list[samples.Side]) -> None:
    figs, notes = micro_figures.all_figures(sides, figures.Colours(s.label for s in sides))
    busy = {s.label: why for s in sides for why in [environment.side_reason(s)] if why}
    for f in figs:
        f.noisy = dict(busy)
    if notes:
        page.html(htmlpage.box("Not shown", notes))
    if not figs:
        page.para("No benchmark with a rate (bytes_per_second) to draw.")
    for f in figs:
        page.figure(f)
