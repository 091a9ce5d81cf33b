#!/usr/bin/env python3
"""scripts/kvbtools in four layers (docs/kvbtools.md): core <- measure <- pages <- commands.

Every module is parsed with Python's ast, its imports at module level and inside functions alike:
an import of kvbtools that runs to a higher layer fails, an import that closes a circle fails,
a function-level import is allowed only of an optional heavy module (matplotlib, psycopg) and
must say why in a comment on its line, and no function is longer than 70 lines.

Two modules import by name (importlib.import_module), and none other may: commands/cli.py, the
modules of its COMMANDS table (each command's parser and run module: only the command asked for
is imported, its run module only when it runs: kvb's start), which count here as cli's imports;
and core/io_util.py, Debian's optional modules (import_debian: psycopg, matplotlib).

The command line stops at commands/: a module of core/, measure/ or pages/ that imports argparse,
has a parameter annotated Namespace or reads `args.<name>` fails; so does a command module (the
parser or the run module of a command of commands/cli.py's table) importing a module of another
command: what commands share lives in a helper module of commands/ (arguments.py,
series_report.py, parsers/groups.py) or in a lower layer. A command's two modules may import
each other (its run module takes the defaults its --help states from its parser).

And the house rules on classes and dead code: no class is longer than 300 lines, no two classes
of kvbtools share a name, and every function and method defined in scripts/kvbtools is reached
from scripts/kvbtools itself (a function only tests call is dead code, not a helper): from module
level, from cli.main (scripts/kvb's entry), or from a function that is reached, by name (a
module's own functions, `from m import f`, `module.f`; methods by any `.name`), or by the string
argparse keeps for it (command.add's run function, set_defaults(func=...)). ONLY_TESTS lists the
exceptions, each with its reason."""
from __future__ import annotations

import ast
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "scripts", "kvbtools")
LAYERS = ("core", "measure", "pages", "commands")
LATE_ALLOWED = ("matplotlib", "psycopg")
# The modules that may import by name, and what they may import so.
DYNAMIC = {"kvbtools.commands.cli": "the modules of its COMMANDS table",
           "kvbtools.core.io_util": "Debian's optional modules, for import_debian"}
MAX_FUNCTION_LINES = 70
MAX_CLASS_LINES = 300
# Functions and methods of scripts/kvbtools that only tests reach, allowed with a reason:
# "module:Class.name" or "module:name".
ONLY_TESTS: dict[str, str] = {}


def modules() -> dict[str, str]:
    """kvbtools.x.y -> its file, for every module of the package."""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), os.path.dirname(PACKAGE))[:-3]
                name = rel.replace(os.sep, ".")
                out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = \
                    os.path.join(d, f)
    return out


# ---- reached code ------------------------------------------------------------------------------

# Calls whose string arguments name a function: command.add(sub, name, doc, "main") names the run
# module's function; set_defaults(func="rm") a subcommand's; getattr(module, "main").
STRING_CALLS = {"add": slice(3, None), "getattr": slice(1, 2), "set_defaults": slice(0, 0)}


def _aliases(tree: ast.AST, known: dict[str, str]) -> tuple[dict[str, tuple[str, str]],
                                                            dict[str, str]]:
    """Names bound by imports: name -> (module, its name there), and alias -> module."""
    names: dict[str, tuple[str, str]] = {}
    mods: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            mods.update({a.asname: a.name for a in n.names if a.asname})
        elif isinstance(n, ast.ImportFrom) and n.module:
            for a in n.names:
                full = f"{n.module}.{a.name}"
                if full in known:
                    mods[a.asname or a.name] = full
                else:
                    names[a.asname or a.name] = (n.module, a.name)
    return names, mods


def _references(node: ast.AST, module: str, names: dict[str, tuple[str, str]],
                mods: dict[str, str]) -> set[tuple[str, str]]:
    """What `node` names: (module, name) for a function of a module, ("*", name) for an
    attribute of anything else (a method), ("str", name) for a name argparse keeps as a string."""
    out: set[tuple[str, str]] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(names.get(n.id, (module, n.id)))
        elif isinstance(n, ast.Attribute):
            value = n.value
            out.add((mods[value.id], n.attr) if isinstance(value, ast.Name)
                    and value.id in mods else ("*", n.attr))
        if isinstance(n, ast.Call):
            f = n.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
                else ""
            if fname in STRING_CALLS:
                given = [*n.args[STRING_CALLS[fname]],
                         *(k.value for k in n.keywords if k.arg == "func")]
                out |= {("str", a.value) for a in given if isinstance(a, ast.Constant)
                        and isinstance(a.value, str) and a.value.isidentifier()}
    return out


def definitions(sources: dict[str, str], known: dict[str, str]
                ) -> tuple[dict[tuple[str, str, str], tuple[int, set[tuple[str, str]]]],
                           set[tuple[str, str]]]:
    """Every function and method, (module, class or "", name) -> (its line, what its body
    names); and what module-level code names (class bodies, decorators, default values
    included)."""
    defs: dict[tuple[str, str, str], tuple[int, set[tuple[str, str]]]] = {}
    top: set[tuple[str, str]] = set()
    for m, source in sources.items():
        tree = ast.parse(source)
        names, mods = _aliases(tree, known)

        def visit(node: ast.AST, cls: str) -> None:
            for ch in ast.iter_child_nodes(node):
                if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    body: set[tuple[str, str]] = set()
                    for x in [*ch.body, *ch.args.defaults, *(d for d in ch.args.kw_defaults if d)]:
                        body |= _references(x, m, names, mods)
                    for d in ch.decorator_list:
                        top.update(_references(d, m, names, mods))
                    defs[(m, cls, ch.name)] = (ch.lineno, body)
                elif isinstance(ch, ast.ClassDef):
                    for b in [*ch.bases, *ch.decorator_list]:
                        top.update(_references(b, m, names, mods))
                    visit(ch, ch.name)
                else:
                    top.update(_references(ch, m, names, mods))
        visit(tree, "")
    return defs, top


def unreached(sources: dict[str, str], known: dict[str, str], entry: tuple[str, str],
              dynamic: set[str]) -> list[tuple[str, str, str]]:
    """The functions and methods nothing reached calls (see the module doc): `entry` (module,
    function) is called from outside; the modules of `dynamic` are imported by name, so any
    `.name` may reach their functions."""
    defs, top = definitions(sources, known)

    def reached(k: tuple[str, str, str], refs: set[tuple[str, str]]) -> bool:
        m, cls, name = k
        if (name.startswith("__") and name.endswith("__")) or (m, name) == entry:
            return True
        if cls:
            return ("*", name) in refs or ("str", name) in refs
        return (m, name) in refs or ("str", name) in refs or (m in dynamic and ("*", name) in refs)
    live = set(defs)
    while True:
        refs = set(top)
        for k in live:
            refs |= defs[k][1] - ({(k[0], k[2])} if not k[1] else set())
        now = {k for k in live if reached(k, refs)}
        if now == live:
            return sorted(set(defs) - live)
        live = now


def classes(sources: dict[str, str]) -> list[tuple[str, str, int, int]]:
    """(module, class, line, length in lines) of every class."""
    return [(m, n.name, n.lineno, n.end_lineno - n.lineno + 1)  # type: ignore[operator]
            for m, source in sources.items() for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.ClassDef)]


class Import:
    def __init__(self, target: str, line: int, late: bool, text: str) -> None:
        self.target, self.line, self.late, self.text = target, line, late, text


def imports(path: str, known: dict[str, str]) -> list[Import]:
    """Every import in the file: (the module it names, its line, inside a function?)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    out: list[Import] = []

    def visit(node: ast.AST, late: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            inner = late or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names: list[str] = []
            if isinstance(ch, ast.Import):
                names = [a.name for a in ch.names]
            elif isinstance(ch, ast.ImportFrom) and ch.level == 0 and ch.module:
                # `from kvbtools.core import store` names the module kvbtools.core.store.
                names = [f"{ch.module}.{a.name}" if f"{ch.module}.{a.name}" in known
                         else ch.module for a in ch.names]
            elif isinstance(ch, ast.ImportFrom):
                names = ["<relative import>"]
            for n in names:
                out.append(Import(n, ch.lineno, late, lines[ch.lineno - 1]))
            visit(ch, inner)
    visit(ast.parse(source, path), False)
    return out


def dynamic_calls(path: str) -> list[int]:
    """The lines that import by name: importlib.import_module(...), __import__(...),
    importlib.util's module_from_spec."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
                else ""
            if name in ("import_module", "__import__", "module_from_spec"):
                out.append(node.lineno)
    return out


def command_rows(cli_source: str) -> list[tuple[str, str, str, str]]:
    """cli.py's COMMANDS: (name, parser module, run module, help line) tuples."""
    for node in ast.parse(cli_source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMMANDS"
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def command_table(path: str) -> list[str]:
    """The modules named in cli.py's COMMANDS: each command's parser and run module."""
    with open(path, encoding="utf-8") as f:
        return [m for row in command_rows(f.read()) for m in (row[1], row[2])]


def argparse_uses(source: str, path: str) -> list[str]:
    """Where a module touches the command line: an import of argparse, a parameter annotated
    with a Namespace, an `args.<name>` attribute access."""
    out = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            out += [f"{path}:{node.lineno}: import {a.name}" for a in node.names
                    if a.name.split(".")[0] == "argparse"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            out.append(f"{path}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None and arg.annotation is not None \
                        and "Namespace" in ast.unparse(arg.annotation):
                    out.append(f"{path}:{arg.lineno}: parameter {arg.arg}: "
                               f"{ast.unparse(arg.annotation)}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "args":
            out.append(f"{path}:{node.lineno}: args.{node.attr}")
    return out


def command_modules(cli_source: str) -> dict[str, str]:
    """The command modules, each with its command: the parser and the run module of every row of
    commands/cli.py's COMMANDS."""
    return {m: row[0] for row in command_rows(cli_source) for m in (row[1], row[2])}


def command_imports(found: dict[str, list[Import]], commands: dict[str, str]) -> list[str]:
    """Every import of a command's module by a module of another command."""
    return [f"{m}:{i.line}: imports the command {i.target}"
            for m in sorted(commands) for i in found.get(m, [])
            if i.target in commands and commands[i.target] != commands[m]]


def layer(module: str) -> int:
    """The layer of kvbtools.<layer>...; -1 for the package itself."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else -1


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


class LayersTest(unittest.TestCase):
    def setUp(self) -> None:
        self.known = modules()
        self.imports = {m: imports(p, self.known) for m, p in self.known.items()}
        # cli imports its table's modules by name: they are its imports all the same.
        cli = "kvbtools.commands.cli"
        self.table = command_table(self.known[cli])
        self.imports[cli] += [Import(t, 0, False, "COMMANDS") for t in self.table]
        self.sources = {}
        for m, p in self.known.items():
            with open(p, encoding="utf-8") as f:
                self.sources[m] = f.read()

    def test_every_module_is_in_a_layer(self) -> None:
        loose = [m for m in self.known if m != "kvbtools" and layer(m) < 0]
        self.assertEqual(loose, [], "modules outside core/measure/pages/commands")

    def test_no_import_runs_upward(self) -> None:
        bad = []
        for m, found in sorted(self.imports.items()):
            for i in found:
                if i.target.startswith("kvbtools") and layer(i.target) > layer(m):
                    bad.append(f"{self.known[m]}:{i.line}: {m} ({LAYERS[layer(m)]}) imports "
                               f"{i.target} ({LAYERS[layer(i.target)]})")
                if i.target == "<relative import>":
                    bad.append(f"{self.known[m]}:{i.line}: a relative import")
        self.assertEqual(bad, [])

    def test_no_import_closes_a_circle(self) -> None:
        graph = {m: {i.target for i in found if i.target in self.known and i.target != m
                     and i.target not in ("kvbtools", *(f"kvbtools.{x}" for x in LAYERS))}
                 for m, found in self.imports.items()}
        self.assertEqual(cycles(graph), [])

    def test_late_imports_are_only_of_heavy_optional_modules_with_a_reason(self) -> None:
        bad = []
        for m, found in sorted(self.imports.items()):
            for i in found:
                if not i.late:
                    continue
                allowed = i.target.split(".")[0] in LATE_ALLOWED
                if not allowed or "#" not in i.text:
                    bad.append(f"{self.known[m]}:{i.line}: {i.text.strip()}"
                               + ("" if allowed else " (only matplotlib or psycopg, "
                                  "imported when used, may be imported in a function)")
                               + (" (say why in a comment)" if "#" not in i.text else ""))
        self.assertEqual(bad, [])

    def test_only_cli_and_io_util_import_by_name(self) -> None:
        bad = [f"{self.known[m]}:{line}: imports by name (only {', '.join(DYNAMIC)} may: "
               f"{'; '.join(DYNAMIC.values())})"
               for m, path in sorted(self.known.items()) if m not in DYNAMIC
               for line in dynamic_calls(path)]
        self.assertEqual(bad, [])
        # The table names modules that exist, each a command in commands/.
        self.assertGreater(len(self.table), 10)
        for module in self.table:
            self.assertIn(module, self.known)
            self.assertEqual(layer(module), LAYERS.index("commands"), module)

    def test_no_function_is_longer_than_70_lines(self) -> None:
        bad = []
        for m, path in sorted(self.known.items()):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    if n > MAX_FUNCTION_LINES:
                        bad.append(f"{path}:{node.lineno}: {node.name} is {n} lines")
        self.assertEqual(bad, [])

    def test_no_class_is_longer_than_300_lines(self) -> None:
        bad = [f"{self.known[m]}:{line}: class {name} is {n} lines (a class of many phases is a "
               "package of them)" for m, name, line, n in classes(self.sources)
               if n > MAX_CLASS_LINES]
        self.assertEqual(bad, [])

    def test_no_two_classes_share_a_name(self) -> None:
        seen: dict[str, list[str]] = {}
        for m, name, line, _ in classes(self.sources):
            seen.setdefault(name, []).append(f"{self.known[m]}:{line}")
        self.assertEqual({k: v for k, v in seen.items() if len(v) > 1}, {})

    def test_every_function_is_reached_from_kvbtools(self) -> None:
        gone = unreached(self.sources, self.known, ("kvbtools.commands.cli", "main"),
                         set(self.table))
        bad = [f"{self.known[m]}:{m.rsplit('.', 1)[-1]}:{f'{c}.' if c else ''}{n}"
               for m, c, n in gone if f"{m}:{f'{c}.' if c else ''}{n}" not in ONLY_TESTS]
        self.assertEqual(bad, [], "only tests reach these: delete them or use them")
        stale = [k for k in ONLY_TESTS if tuple(k.split(":")) not in
                 {(m, f"{c}.{n}" if c else n) for m, c, n in gone}]
        self.assertEqual(stale, [], "ONLY_TESTS names functions that are reached (or gone)")

    def test_the_command_line_stops_at_commands(self) -> None:
        bad = []
        for m, path in sorted(self.known.items()):
            if 0 <= layer(m) < LAYERS.index("commands"):
                with open(path, encoding="utf-8") as f:
                    bad += argparse_uses(f.read(), path)
        self.assertEqual(bad, [], "argparse below commands/: a request's values go down, not "
                                  "the namespace (docs/kvbtools.md)")

    def test_no_command_imports_another_command(self) -> None:
        commands = command_modules(self.sources["kvbtools.commands.cli"])
        self.assertEqual(commands.get("kvbtools.commands.matrix"), "matrix")
        self.assertEqual(commands.get("kvbtools.commands.parsers.matrix"), "matrix")
        self.assertNotIn("kvbtools.commands.arguments", commands)
        self.assertNotIn("kvbtools.commands.parsers.groups", commands)
        self.assertEqual(command_imports(self.imports, commands), [],
                         "shared code goes to a helper of commands/ or a lower layer")

    def test_the_new_checks_see_what_they_check(self) -> None:
        # Each violation once, in a module that exists only here.
        bad = ("import argparse\nfrom argparse import Namespace\n"
               "def f(a: argparse.Namespace, *, b: 'Namespace') -> int:\n"
               "    return args.store\n"
               "def g(args: list[str]) -> None:\n    args.append('x')\n")
        found = argparse_uses(bad, "x.py")
        self.assertEqual(sorted(f.split(": ", 1)[1] for f in found),
                         sorted(["import argparse", "from argparse import ...",
                                 "parameter a: argparse.Namespace", "parameter b: 'Namespace'",
                                 "args.store", "args.append"]), found)
        self.assertEqual(argparse_uses("def f(cfg: Config) -> int:\n    return cfg.args\n",
                                       "y.py"), [])
        cli = ("from kvbtools.commands import helper\n"
               "COMMANDS = (('a', 'kvbtools.commands.parsers.a', 'kvbtools.commands.a', 'A'),\n"
               "            ('b', 'kvbtools.commands.parsers.b', 'kvbtools.commands.b', 'B'))\n")
        commands = command_modules(cli)
        self.assertEqual(commands, {"kvbtools.commands.parsers.a": "a", "kvbtools.commands.a": "a",
                                    "kvbtools.commands.parsers.b": "b", "kvbtools.commands.b": "b"})
        found_imports = {
            "kvbtools.commands.a": [Import("kvbtools.commands.b", 3, False, ""),
                                    Import("kvbtools.commands.helper", 4, False, ""),
                                    Import("kvbtools.commands.c", 5, True, ""),
                                    Import("kvbtools.commands.parsers.a", 6, False, ""),
                                    Import("kvbtools.commands.parsers.b", 7, False, "")],
            "kvbtools.commands.parsers.a": [Import("kvbtools.commands.a", 1, False, "")],
            "kvbtools.commands.parsers.b": [Import("kvbtools.commands.a", 2, False, "")],
            "kvbtools.commands.helper": [Import("kvbtools.commands.a", 1, False, "")]}
        self.assertEqual(command_imports(found_imports, commands),
                         ["kvbtools.commands.a:3: imports the command kvbtools.commands.b",
                          "kvbtools.commands.a:7: imports the command "
                          "kvbtools.commands.parsers.b",
                          "kvbtools.commands.parsers.b:2: imports the command "
                          "kvbtools.commands.a"])

    def test_the_class_and_reach_checks_see_what_they_check(self) -> None:
        sources = {
            "kvbtools.core.a": "import kvbtools.core.b as bee\n"
                               "def used():\n    return bee.helper()\n"
                               "def dead():\n    return dead2()\n"
                               "def dead2():\n    return 1\n"
                               "class K:\n    def m(self):\n        return 1\n"
                               "    def unused(self):\n        return self.m()\n"
                               "    def __len__(self):\n        return 0\n",
            "kvbtools.core.b": "from kvbtools.core.a import used\n"
                               "def helper():\n    return 2\n"
                               "def main():\n    return used() + K().m()\n"
                               "def later():\n    return 3\n"
                               "p.set_defaults(func='later')\n"
                               "class K:\n" + "    x = 1\n" * 300}
        known = {m: m for m in sources}
        self.assertEqual(unreached(sources, known, ("kvbtools.core.b", "main"), set()),
                         [("kvbtools.core.a", "", "dead"), ("kvbtools.core.a", "", "dead2"),
                          ("kvbtools.core.a", "K", "unused")])
        self.assertEqual([(c, n) for _, c, _, n in classes(sources)], [("K", 7), ("K", 301)])

    def test_the_checks_see_what_they_check(self) -> None:
        # An upward import, a circle and a late import, in modules that exist only here.
        self.assertEqual(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}),
                         [["a", "b", "c"]])
        self.assertEqual(layer("kvbtools.pages.figures"), 2)
        self.assertGreater(len(self.known), 50)
        late = [i for i in self.imports["kvbtools.pages.figures"] if i.late]
        self.assertTrue(any(i.target.startswith("matplotlib") for i in late))
        self.assertTrue(dynamic_calls(self.known["kvbtools.commands.cli"]))
        self.assertLessEqual({"kvbtools.commands.bisect", "kvbtools.commands.parsers.bisect"},
                             {i.target for i in self.imports["kvbtools.commands.cli"]})


if __name__ == "__main__":
    unittest.main(verbosity=2)
