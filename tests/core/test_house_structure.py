"""Rules of the house's structure that the code itself can check: the store holds every SQL query."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "annotator"

#: SQLAlchemy's query constructs: called anywhere but annotator/store/, they are SQL outside its one home
QUERY_CONSTRUCTS = {"select", "text", "insert", "update", "delete", "union", "exists"}
#: methods that run a statement, whatever built it
RUNNERS = {"execute", "exec_driver_sql", "executemany"}


def sql_outside_store(source: str, where: str = "<sample>") -> list[str]:
    """Where ``source`` builds or runs a query: a call of a query construct taken from sqlalchemy (``select(``,
    ``text(``, ``sa.select(``, ...) or of a statement runner (``.execute(``); each as ``where:line: what``."""
    tree = ast.parse(source)
    constructs, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy":
            constructs |= {a.asname or a.name for a in node.names if a.name in QUERY_CONSTRUCTS}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.split(".")[0] == "sqlalchemy"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in constructs:
            found.append(f"{where}:{node.lineno}: {f.id}(")
        elif isinstance(f, ast.Attribute) and f.attr in RUNNERS:
            found.append(f"{where}:{node.lineno}: .{f.attr}(")
        elif (isinstance(f, ast.Attribute) and f.attr in QUERY_CONSTRUCTS and isinstance(f.value, ast.Name)
              and f.value.id in modules):
            found.append(f"{where}:{node.lineno}: {f.value.id}.{f.attr}(")
    return sorted(found, key=lambda s: int(s.split(":")[-2]))


def test_every_query_is_in_the_store():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[:2] == ("annotator", "store"):
            continue
        found += sql_outside_store(path.read_text(encoding="utf-8"), str(rel))
    assert found == [], "SQL outside annotator/store/ (move it into a store function):\n" + "\n".join(found)


def test_the_sql_check_finds_a_planted_query():
    planted = ("import sqlalchemy as sa\nfrom sqlalchemy import select, text as sql_text\n"
               "def f(conn, t):\n    rows = conn.execute(select(t.c.id)).all()\n"
               "    conn.execute(sql_text('VACUUM'))\n    return sa.select(t)\n")
    assert sql_outside_store(planted) == ["<sample>:4: .execute(", "<sample>:4: select(", "<sample>:5: .execute(",
                                          "<sample>:5: sql_text(", "<sample>:6: sa.select("]
    # Names that only look like queries are not: a page's st.text, a string's .select, a local text().
    harmless = ("import streamlit as st\nfrom sqlalchemy.exc import IntegrityError\n"
                "def text(x):\n    return x\nst.text(text('a'))\nst.multiselect('x', [])\n")
    assert sql_outside_store(harmless) == []


# ------------------------------------------------------------------ io/ reads and checks; the store opens connections

#: what opens a connection or a transaction, called on anything: the store's own context managers and the engine's
OPENERS = {"transaction", "connect", "begin", "raw_connection"}


def connections_in(source: str, where: str = "<sample>") -> list[str]:
    """Where ``source`` imports sqlalchemy (anywhere in the file) or opens a connection (``.transaction(``,
    ``.connect(``, ``.begin(``, a store's ``.read(``, a store's ``.engine``); each as ``where:line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy":
            found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.ImportFrom) and node.level and (node.module or "").split(".")[-1] == "engine":
            found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] == "sqlalchemy"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            receiver = f.value.attr if isinstance(f.value, ast.Attribute) else getattr(f.value, "id", "")
            if f.attr in OPENERS or (f.attr == "read" and receiver == "store"):
                found.append((node.lineno, f".{f.attr}("))
        elif isinstance(node, ast.Attribute) and node.attr == "engine":
            found.append((node.lineno, ".engine"))
    return [f"{where}:{line}: {what}" for line, what in sorted(found)]


def test_io_opens_no_connection():
    # An importer parses and checks; the store (annotator/store/imports.py and its neighbours) opens the import's
    # one transaction and runs every query, so io/ needs neither sqlalchemy nor a connection of its own.
    found = []
    for path in sorted((PACKAGE / "io").rglob("*.py")):
        found += connections_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], "io/ imports sqlalchemy or opens a connection (move it into a store function):\n" + "\n".join(found)


def test_the_connection_check_finds_a_planted_one():
    planted = ("from sqlalchemy.exc import DataError\nimport sqlalchemy as sa\nfrom ..store.engine import make_engine\n"
               "def f(store, rows):\n    with store.transaction() as conn:\n        pass\n"
               "    with store.read() as conn:\n        pass\n    with store.engine.begin() as conn:\n        pass\n"
               "    with self.store.read() as conn:\n        pass\n")
    assert connections_in(planted) == [
        "<sample>:1: from sqlalchemy.exc import", "<sample>:2: import sqlalchemy", "<sample>:3: from store.engine import",
        "<sample>:5: .transaction(", "<sample>:7: .read(", "<sample>:9: .begin(", "<sample>:9: .engine",
        "<sample>:11: .read("]
    # A file's read, a reader's read() and a store function given a connection by the store are not.
    harmless = ("def f(fh, reader, store, conn):\n    fh.read()\n    reader.read()\n"
                "    return write_in_batches(store, 'p', [], lambda conn, pid: (conn, pid))\n")
    assert connections_in(harmless) == []


# ------------------------------------------------------------------ no import cycles

def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports(package_dir: Path):
    """Every import in the package's files: (importing module, imported name, line, inside a function?).

    The imported name is a module of the package where it names one (``from .x import name`` gives ``x``, or
    ``x.name`` when that is a module of its own; ``import annotator.x.y`` without a module ``y`` gives its
    package), else the name as written (a library: ``pandas``, ``openpyxl.styles``)."""
    root = package_dir.parent
    files = {_module_name(p, root): p for p in package_dir.rglob("*.py")}
    top = package_dir.name

    def own(target: str) -> str:
        found = target
        while found and found not in files and found.startswith(top):
            found = found.rpartition(".")[0]
        return found if found in files else target

    for mod, path in files.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy_lines = {n.lineno for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here.split(".")[:len(here.split(".")) - node.level + 1] if node.level else []
                base = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            for t in targets:
                yield mod, own(t), node.lineno, node.lineno in lazy_lines


def _imports(package_dir: Path) -> list[tuple[str, str, int, bool]]:
    """:func:`package_imports` as a list, read once per test process for the app's package (every file parsed)."""
    return _package_import_list() if package_dir == PACKAGE else list(package_imports(package_dir))


@functools.cache
def _package_import_list() -> list[tuple[str, str, int, bool]]:
    return list(package_imports(PACKAGE))


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module → the modules of the package it imports, counting imports anywhere in the file (inside functions
    too, where a cycle hides from the interpreter)."""
    root = package_dir.parent
    graph: dict[str, set[str]] = {_module_name(p, root): set() for p in package_dir.rglob("*.py")}
    for mod, target, _, _ in _imports(package_dir):
        if target in graph and target != mod:
            graph[mod].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


@functools.cache
def package_graph() -> dict[str, set[str]]:
    """The import graph of the app's package, built once per test process (it parses every module)."""
    return import_graph(PACKAGE)


def test_no_import_cycle():
    found = cycles(package_graph())
    assert found == [], "modules that import each other in a loop (imports inside functions counted):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_planted_cycle(tmp_path):
    pkg = tmp_path / "house"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "io" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "io" / "reader.py").write_text("from .writer import store_rows\n", encoding="utf-8")
    (pkg / "io" / "writer.py").write_text("def store_rows():\n    from . import reader\n", encoding="utf-8")
    (pkg / "core.py").write_text("import house.io.reader\n", encoding="utf-8")
    assert import_graph(pkg)["house.core"] == {"house.io.reader"}
    assert cycles(import_graph(pkg)) == [["house.io.reader", "house.io.writer"]]
    (pkg / "io" / "writer.py").write_text("def store_rows():\n    pass\n", encoding="utf-8")
    assert cycles(import_graph(pkg)) == []


def test_nothing_imports_the_command_line_back():
    # The command line sits on top: its commands and the pages take what they share with it (the JSON and
    # printable text of annotator.report, the --json flag of annotator.commands) from below, not from cli.py.
    graph = package_graph()
    assert sorted(m for m, targets in graph.items() if "annotator.cli" in targets) == ["annotator.__main__"]


def test_the_dashboards_frames_have_one_home():
    # Reading, snapshots, warm-up and the process's shared frames live in annotator/frames/; the store keeps only
    # the SQL they use (the judgement read and the versions).
    from annotator.frames import assignments, live, shared, snapshots, warm
    homes = {live.LiveJudgementFrame: "live", live.merge_judgement_frames: "live", snapshots.SnapshotFolder: "snapshots",
             snapshots.folder_for: "snapshots", shared.dashboard_frame: "shared", shared.team_live_frame: "shared",
             warm.warm_up: "warm", warm.warm_up_in_background: "warm", assignments.assignment_frame: "assignments"}
    assert {thing.__module__ for thing in homes} == {f"annotator.frames.{m}" for m in homes.values()}
    assert not (PACKAGE / "live_frames.py").exists() and not (PACKAGE / "store" / "frame_snapshots.py").exists()


def test_store_modules_hold_one_job_each():
    # A store module that grows past this has taken on a second job (analysis_queries.py held the bulk read, the
    # live frames and the screen look-ups in 745 lines): split it by job rather than raise the bound.
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (PACKAGE / "store").glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 500} == {}


# ------------------------------------------------------------------ layers: no arrow runs back up the house

#: The libraries the package may import inside a function, and why there. Every other library is imported at the
#: top of its module, where a reader sees what the module needs; the standard library is free either way.
LAZY_LIBRARIES = {
    "altair": "the charts' helpers load it when a page draws a chart",
    "numpy": "the team filter's frame arithmetic, away from the light account code that imports that module",
    "openpyxl": "only an XLSX export writes a workbook",
    "pandas": "frames built by reports and tokenisers only when asked for one, so the command line starts light",
    "scipy": "the statistics that need it (intervals, tests, sparse sums), when they run",
    "sklearn": "the detectors' ROC AUC, only in the estimate report",
    "sqlalchemy": "the store's dialect-specific inserts and the migrations' DDL, picked per database at run time",
    "streamlit": "the UI helpers that also run outside a page (tests, the server's start-up) load it when drawing",
    "textstat": "the readability measures of the diversity report",
}


def _unit(module: str, top: str) -> str:
    """The layer a module belongs to: the package's top-level module or subpackage (``annotator.io``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == top and len(parts) > 1 else parts[0]


def upward_imports(package_dir: Path) -> list[str]:
    """Imports that run back up the house, each as ``file:line: what``.

    The package's layers are its top-level modules and subpackages. A layer that imports another, at the top of
    a module or inside a function, stands above it; two layers that import each other are a loop, and the
    imports inside functions that close it (a lower layer reaching up where the interpreter cannot see) are
    listed; a loop of top-level imports only is listed as the loop."""
    top = package_dir.name
    root = package_dir.parent
    modules = {_module_name(p, root) for p in package_dir.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    lazy: list[tuple[str, str, int, str]] = []
    for mod, target, line, inside in _imports(package_dir):
        if target not in modules:
            continue
        a, b = _unit(mod, top), _unit(target, top)
        if a != b:
            edges.setdefault(a, set()).add(b)
            if inside:
                lazy.append((a, b, line, mod))
    found = []
    for loop in cycles(edges):
        closing = [(a, b, line, mod) for a, b, line, mod in lazy if a in loop and b in loop]
        found += [f"{mod.replace('.', '/')}.py:{line}: imports {b} inside a function, but {b} imports {a} "
                  "(directly or through others)" for a, b, line, mod in closing]
        if not closing:
            found.append("layers that import each other: " + " <-> ".join(loop))
    return sorted(found)


def lazy_libraries(package_dir: Path) -> dict[str, list[str]]:
    """Library → where the package imports it inside a function (``file:line``); the standard library left out."""
    root = package_dir.parent
    modules = {_module_name(p, root) for p in package_dir.rglob("*.py")}
    found: dict[str, list[str]] = {}
    for mod, target, line, inside in _imports(package_dir):
        name = target.split(".")[0]
        if inside and target not in modules and name not in sys.stdlib_module_names and name != package_dir.name:
            found.setdefault(name, []).append(f"{mod.replace('.', '/')}.py:{line}")
    return found


def test_no_import_runs_back_up_the_house():
    found = upward_imports(PACKAGE)
    assert found == [], ("a lower layer imports a higher one inside a function (keep io/ to codecs; code that "
                         "composes higher layers goes above them, e.g. annotator/exchange/):\n" + "\n".join(found))


def test_libraries_imported_inside_functions_are_the_listed_ones():
    found = lazy_libraries(PACKAGE)
    unlisted = {name: where for name, where in found.items() if name not in LAZY_LIBRARIES}
    assert unlisted == {}, "import these at the top of the module, or list them in LAZY_LIBRARIES with why"
    assert sorted(set(LAZY_LIBRARIES) - set(found)) == [], "listed but imported lazily nowhere: take them off the list"


def test_the_layer_check_finds_a_planted_upward_import(tmp_path):
    pkg = tmp_path / "house"
    for folder in ("io", "exchange"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "export.py").write_text("from .io.codec import write\n", encoding="utf-8")
    (pkg / "io" / "codec.py").write_text("import json\n\ndef write():\n    import pandas\n    return json, pandas\n",
                                         encoding="utf-8")
    (pkg / "exchange" / "tool.py").write_text("from ..io import codec\nfrom .. import export\n", encoding="utf-8")
    assert upward_imports(pkg) == [] and lazy_libraries(pkg) == {"pandas": ["house/io/codec.py:4"]}
    # the codec reaches up into the export, inside a function (no module-level loop for the interpreter to see)
    (pkg / "io" / "codec.py").write_text("def write():\n    from ..export import rows\n    return rows\n",
                                         encoding="utf-8")
    assert upward_imports(pkg) == ["house/io/codec.py:2: imports house.export inside a function, but house.export "
                                   "imports house.io (directly or through others)"]
    # through a third layer as well: io -> exchange -> export -> io
    (pkg / "export.py").write_text("x = 1\n", encoding="utf-8")
    (pkg / "io" / "codec.py").write_text("def write():\n    from ..exchange.tool import codec\n", encoding="utf-8")
    (pkg / "export.py").write_text("from .io import codec\n", encoding="utf-8")
    assert upward_imports(pkg) == ["house/io/codec.py:2: imports house.exchange inside a function, but "
                                   "house.exchange imports house.io (directly or through others)"]
