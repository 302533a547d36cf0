"""Rules of the house's structure that the code itself can check: the store holds every SQL query."""

from __future__ import annotations

import ast
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
