"""Diversity of stored projects and ``annotator diversity`` (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import math

import pytest
from tests.core.test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B, run_cli as run

from annotator import diversity as D
from annotator.errors import NotFound
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

SECOND_REFS = [f"a photo of scene number {i} with people and things" for i in range(20)]


def seed(store, name="div"):
    items = [Item(key=f"im{i:02d}.jpg", references=[Reference(HUMAN_CAPTIONS[i]), Reference(SECOND_REFS[i])],
                  captions=[Caption("A", SPARSE_A[i]), Caption("B", SPARSE_B[i])]) for i in range(20)]
    with store.transaction() as conn:
        write_project(conn, Project(name, items=items))


def expected(systems=("A", "B"), **kw):
    refs = [t for i in range(20) for t in (HUMAN_CAPTIONS[i], SECOND_REFS[i])]
    texts = {"A": SPARSE_A, "B": SPARSE_B}
    return D.diversity_report(refs, {s: texts[s] for s in systems}, **kw)


def test_project_diversity(store):
    seed(store)
    got = D.project_diversity(store, "div", curves=True)
    want = expected()
    assert got.references.measures == want.references.measures
    assert got.references.texts == 40
    assert list(got.systems) == ["A", "B"]
    for s in ("A", "B"):
        assert got.systems[s].measures == want.systems[s].measures
        assert got.systems[s].ld == want.systems[s].ld
        assert got.systems[s].texts == 20
    assert set(got.curves) == {"references", "A", "B"}
    only_b = D.project_diversity(store, "div", systems=["B"])
    assert list(only_b.systems) == ["B"]
    with pytest.raises(NotFound):
        D.project_diversity(store, "div", systems=["C"])
    with pytest.raises(NotFound):
        D.project_diversity(store, "nope")


def test_cli_json(store, capsys):
    seed(store)
    rc, out, _ = run(store, capsys, "diversity", "--project", "div", "--json")
    assert rc == 0
    data = json.loads(out)
    assert set(data) >= {"references", "systems"}
    measures = {"tokens", "types", "ttr", "rttr", "logttr", "hdd", "mtld", "mattr"}
    assert set(data["references"]) >= measures
    assert set(data["systems"]) == {"A", "B"}
    want = expected()
    for s in ("A", "B"):
        row = data["systems"][s]
        assert set(row) >= measures | {"ld", "lexical_gap"}
        for m in measures:
            assert row[m] == pytest.approx(want.systems[s].measures[m], rel=1e-12)
        assert row["ld"] == pytest.approx(row["hdd"] / data["references"]["hdd"])
        assert row["lexical_gap"] == pytest.approx(1 / (1 + math.exp(-5 * (row["ld"] - 0.81))))


def test_cli_options_and_output(store, capsys, tmp_path):
    seed(store)
    out_file = tmp_path / "div.csv"
    rc, out, _ = run(store, capsys, "diversity", "--project", "div", "--system", "A", "--measure", "mtld", "--mu", "0.5",
                     "--alpha", "2", "--mattr-window", "100", "--mtld", "mccarthy-jarvis", "--output", str(out_file), "--json")
    assert rc == 0
    data = json.loads(out)
    assert list(data["systems"]) == ["A"]
    a = data["systems"]["A"]
    assert a["ld"] == pytest.approx(a["mtld"] / data["references"]["mtld"])
    assert a["lexical_gap"] == pytest.approx(1 / (1 + math.exp(-2 * (a["ld"] - 0.5))))
    want = expected(("A",), settings=D.DiversitySettings(mattr_window=100, mtld=D.MTLD_MCCARTHY_JARVIS))
    assert a["mattr"] == pytest.approx(want.systems["A"].measures["mattr"])
    assert a["mtld"] == pytest.approx(want.systems["A"].measures["mtld"])
    assert data["settings"]["mattr_window"] == 100 and data["settings"]["ratio_measure"] == "mtld"
    text = out_file.read_text()
    assert text.startswith("# Lexical diversity") and "references" in text and "lexical_gap" in text
    rc, out, _ = run(store, capsys, "diversity", "--project", "div")
    assert rc == 0 and "HD-D" in out and "references" in out and "Lg" in out


def test_cli_errors(store, capsys):
    seed(store)
    rc, _, err = run(store, capsys, "diversity", "--project", "div", "--system", "C")
    assert rc == 2 and "no system called 'C'" in err
    rc, _, err = run(store, capsys, "diversity", "--project", "div", "--mtld-threshold", "1.5")
    assert rc == 2 and "threshold" in err
    rc, _, err = run(store, capsys, "diversity", "--project", "div", "--output", "x.unknown")
    assert rc == 2 and "--format" in err
