"""``annotator agreement``, ``disagreements``, ``adjudicate`` and ``practice`` on the hand-made project."""

from __future__ import annotations

import json

import pytest
from openpyxl import load_workbook

from annotator.taxonomy import ERROR_TYPE_IDS
from tests.cli_helpers import run_cli as _run
from tests.store.test_agreement_store import PROJECT, build_project


def test_agreement_json_two_annotators(store, capsys):
    build_project(store)
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--json")
    assert code == 0
    d = json.loads(out)
    assert d["n"] == 18 and d["kappa"] == pytest.approx(0.64) and d["accuracy"] == pytest.approx(15 / 18)
    assert d["inaccurate"] == {"ann1": 12, "ann2": 11} and d["both_inaccurate"] == 10
    assert d["fine_precision"] == pytest.approx(9 / 13) and d["fine_recall"] == pytest.approx(0.75)
    assert d["fine_f1"] == pytest.approx(0.72)
    assert list(d["per_type"]) == list(ERROR_TYPE_IDS) and d["per_type"]["gender"]["kappa"] == pytest.approx(1.0)
    assert d["practice_excluded"]["captions"] == 2
    lo, hi = d["kappa_ci"]
    assert lo < 0.64 < hi
    # Same seed, same interval; the reference annotator swaps precision and recall.
    code, out2, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann2", "ann1",
                         "--json")
    d2 = json.loads(out2)
    assert d2["fine_precision"] == pytest.approx(0.75) and d2["fine_recall"] == pytest.approx(9 / 13)


def test_agreement_json_three_annotators_and_system(store, capsys):
    build_project(store)
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "ann3", "--json")
    d = json.loads(out)
    assert d["fleiss_kappa"] == pytest.approx(1 / 28) and d["fleiss_items"] == 6
    assert d["alpha"] is not None and len(d["pairs"]) == 3
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--system", "sysB", "--json")
    d = json.loads(out)
    assert d["n"] == 9 and d["system"] == "sysB"


def test_agreement_text_and_exports(store, capsys, tmp_path):
    build_project(store)
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2")
    assert code == 0 and "kappa 0.640" in out and "left out: 2 captions of 1 practice items" in out
    target = tmp_path / "agreement.xlsx"
    code, _, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                      "--format", "xlsx", "--output", str(target))
    wb = load_workbook(target)
    assert wb.sheetnames[:2] == ["Pairwise agreement", "Overall"]
    assert wb["Pairwise agreement"]["E2"].value == pytest.approx(0.64)
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--format", "latex")
    assert "\\toprule" in out and "ann1 & ann2 & 18" in out


def test_agreement_errors(store, capsys):
    build_project(store)
    code, _, err = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ghost")
    assert code == 2 and "'ghost' has no judgements" in err
    code, _, err = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1")
    assert code == 2 and "at least two annotators" in err
    code, _, err = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--system", "zzz")
    assert code == 2 and "no system 'zzz'" in err


def test_disagreements_adjudicate_and_practice_commands(store, capsys):
    ids = build_project(store, adjudications=False)
    code, out, _ = _run(capsys, "--db", store.url, "disagreements", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--labels-only", "--json")
    rows = json.loads(out)
    assert {r["caption_id"] for r in rows} == {ids[i] for i in (4, 5, 9, 12, 19)}
    assert all(not r["adjudicated"] for r in rows)
    code, out, err = _run(capsys, "--db", store.url, "adjudicate", "--project", PROJECT, "--caption", str(ids[12]),
                          "--user", "lea", "--label", "inaccurate", "--types", "Scene / event / location", "--json")
    assert code == 0 and json.loads(out)["error_types"] == ["scene"]
    code, _, err = _run(capsys, "--db", store.url, "adjudicate", "--project", PROJECT, "--caption", str(ids[12]),
                        "--user", "ann1", "--label", "accurate")
    assert code == 3 and "not allowed" in err
    code, out, _ = _run(capsys, "--db", store.url, "disagreements", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--labels-only", "--open", "--json")
    assert ids[12] not in {r["caption_id"] for r in json.loads(out)}
    code, out, _ = _run(capsys, "--db", store.url, "practice", "--project", PROJECT, "--items", "img9", "--unset", "--json")
    assert json.loads(out) == {"items": 1, "practice": False}
    code, out, _ = _run(capsys, "--db", store.url, "agreement", "--project", PROJECT, "--annotators", "ann1", "ann2",
                        "--json")
    assert json.loads(out)["n"] == 20
    code, _, err = _run(capsys, "--db", store.url, "practice", "--project", PROJECT, "--items", "nope")
    assert code == 2 and "no item 'nope'" in err
