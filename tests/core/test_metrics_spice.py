"""SPICE: found where pycocoevalcap looks for the CoreNLP 3.6.0 jars (or in the folder ANNOTATOR_SPICE_CORENLP
names), reported unavailable with its reason when they are missing, and its JSON output read from a recorded file.
Scores themselves are checked against pycocoevalcap by the metric contract tests wherever the jars are present."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from annotator.cli import main
from annotator.metrics import REGISTRY, MetricInputError, rescore
from annotator.metrics import spice as spice_module
from annotator.metrics.spice import CORENLP_ENV, CORENLP_JARS, Spice, corenlp_dir, parse_output, spice_dir
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

RECORDED = Path(__file__).parent.parent / "fixtures" / "spice" / "output.json"


@pytest.fixture
def no_corenlp(tmp_path, monkeypatch):
    """SPICE pointed at an empty folder: the CoreNLP jars are missing whatever this machine has."""
    folder = tmp_path / "corenlp"
    folder.mkdir()
    monkeypatch.setenv(CORENLP_ENV, str(folder))
    return folder


def test_the_jars_are_looked_for_where_pycocoevalcap_looks():
    from pycocoevalcap.spice import get_stanford_models as g
    # pycocoevalcap downloads unless SPICEDIR/lib/stanford-corenlp-3.6.0.jar exists, and puts the models jar beside it.
    assert Path(g.SPICEDIR).resolve() == spice_dir().resolve()
    assert f"{g.JAR}.jar" == CORENLP_JARS[0] and f"{g.JAR}-models.jar" == CORENLP_JARS[1]
    assert (spice_dir() / "spice-1.0.jar").is_file() and g.SPICELIB == "lib"


def test_unavailable_without_the_corenlp_jars_says_what_and_where(no_corenlp, capsys):
    reason = Spice.unavailable_reason()
    assert reason is not None
    assert "SPICE needs the Stanford CoreNLP 3.6.0 jars" in reason
    assert "stanford-corenlp-3.6.0.jar and stanford-corenlp-3.6.0-models.jar are not in" in reason
    assert str(no_corenlp) in reason and CORENLP_ENV in reason and "spice/lib" in reason
    assert REGISTRY.unavailable(["spice"]) == {"spice": reason}
    assert "spice" not in REGISTRY.available()
    # One jar present: the other is named.
    (no_corenlp / CORENLP_JARS[0]).write_bytes(b"")
    reason = Spice.unavailable_reason()
    assert "stanford-corenlp-3.6.0-models.jar is not in" in reason and "3.6.0.jar and" not in reason
    # Scoring goes on without it, with the reason as a note.
    out = rescore(["a dog runs"], [["a dog is running", "dog running"]], metrics=["bleu", "spice"])
    assert out["SPICE"] is None and out["Bleu_1"] is not None
    assert any("SPICE needs the Stanford CoreNLP 3.6.0 jars" in n for n in out["notes"])


def test_unavailable_without_java(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert Spice.unavailable_reason() == "SPICE needs Java: no `java` executable on PATH (install a Java runtime)"


def test_found_in_the_folder_the_variable_names(no_corenlp):
    for jar in CORENLP_JARS:
        (no_corenlp / jar).write_bytes(b"")
    assert corenlp_dir() == no_corenlp
    cp = spice_module.classpath().split(":")
    assert cp[:3] == [str(spice_dir() / "spice-1.0.jar"), *(str(no_corenlp / j) for j in CORENLP_JARS)]
    assert str(spice_dir() / "lib" / "SceneGraphParser-1.0.jar") in cp
    if shutil.which("java"):
        assert Spice.unavailable_reason() is None and "spice" in REGISTRY.available()


def test_the_command_line_reports_spice_unavailable(no_corenlp, store, capsys):
    with store.transaction() as conn:
        write_project(conn, Project(name="sp", items=[Item(key="a", references=[Reference("a dog runs on grass")],
                                                            captions=[Caption("s", "a dog runs")])]))
    code = main(["--db", store.url, "rescore", "--project", "sp", "--system", "s", "--metrics", "bleu,spice"])
    out = capsys.readouterr().out
    assert code == 0
    assert "SPICE" in out and "n/a" in out.split("SPICE", 1)[1].splitlines()[0]
    assert "note: SPICE not computed: SPICE needs the Stanford CoreNLP 3.6.0 jars" in out
    code = main(["--db", store.url, "rescore", "--project", "sp", "--system", "s", "--metrics", "spice", "--json"])
    got = json.loads(capsys.readouterr().out)
    assert got["SPICE"] is None and "SPICE|version=1.0|corenlp=3.6.0|subset=yes|tok=none" in got["signatures"]["SPICE"]


def test_parses_a_recorded_output_file():
    scores = parse_output(RECORDED.read_text(encoding="utf-8"), 3)
    # Entries come back in caption order whatever order the file lists them in.
    assert [s["All"]["tp"] for s in scores] == [3.0, 0.0, 2.0]
    assert scores[0]["All"] == {"pr": 0.75, "re": 0.6, "f": 0.6666666666666666, "fn": 2.0, "numImages": 1.0,
                                "fp": 1.0, "tp": 3.0}
    assert scores[0]["Object"]["f"] == 1.0 and scores[2]["Relation"]["f"] == 1.0
    # NaN, null and the string "NaN" are all NaN (pycocoevalcap's float_convert).
    assert math.isnan(scores[0]["Color"]["pr"]) and math.isnan(scores[1]["Cardinality"]["f"])
    assert math.isnan(scores[1]["Count"]["f"])
    assert set(scores[1]) == {"All", "Relation", "Cardinality", "Attribute", "Size", "Color", "Object", "Count"}
    # The corpus score is the mean of the captions' F-measures: (2/3 + 0 + 2/3) / 3.
    m = Spice()
    score = m.aggregate(np.array([[s["All"]["f"]] for s in scores]), per_segment=True)
    assert score.value == pytest.approx(4 / 9, abs=1e-15)
    assert score.value == float(np.mean([0.6666666666666666, 0.0, 0.6666666666666666]))
    assert score.per_segment == [0.6666666666666666, 0.0, 0.6666666666666666]


def test_a_broken_output_is_refused_with_what_is_wrong():
    data = json.loads(RECORDED.read_text(encoding="utf-8"))
    with pytest.raises(MetricInputError, match="3 captions for the 4 sent"):
        parse_output(data, 4)
    with pytest.raises(MetricInputError, match="caption 0 twice"):
        parse_output(data + [data[1]], 4)
    with pytest.raises(MetricInputError, match="entry 0 has no image_id or scores"):
        parse_output([{"scores": {}}], 1)
    with pytest.raises(MetricInputError, match="caption 0 has no 'All' scores"):
        parse_output([{"image_id": 0, "scores": {"Object": {"f": 1.0}}}], 1)
    with pytest.raises(MetricInputError, match="not JSON"):
        parse_output("[{", 1)
