"""``annotator import judge``: judge files read strictly, stored apart from human judgements, replaced on re-import
with the changes counted, and refused line by line with nothing stored."""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError
from annotator.exchange.judge_files import import_judge
from annotator.judges import load_judge
from annotator.sample import load_sample
from annotator.store.analysis_queries import judgement_frame
from annotator.store.judges import project_judges
from annotator.store.projects import project_id
from tests.cli_helpers import run_cli as run

HEADER = {"format": "annotator-judge", "version": 1, "judge": "vlm", "model": "m-7b", "prompt": "1", "k": 5}
ROW = {"item": "astronaut.jpg", "system": "sat-attn", "p_inaccurate": 0.8}


@pytest.fixture
def sample(store):
    load_sample(store, with_judgements=False)
    return store


def write(tmp_path, *rows, header=HEADER, name="judge.jsonl") -> str:
    path = tmp_path / name
    lines = [json.dumps(header)] if header is not None else []
    path.write_text("\n".join(lines + [r if isinstance(r, str) else json.dumps(r) for r in rows]) + "\n",
                    encoding="utf-8")
    return str(path)


def judges_of(store, project="sample"):
    with store.read() as conn:
        return {j.name: j for j in project_judges(conn, project_id(conn, project))}


def test_the_sample_judge_reads_back(sample):
    from annotator.config import SAMPLE_DIR
    result = import_judge(sample, "sample", SAMPLE_DIR / "judge.jsonl")
    assert (result.judge, result.outputs, result.replaced) == ("sample-vlm", 16, False)
    judge = load_judge(sample, "sample", "sample-vlm")
    assert judge.signature == {"model": "hand-written example (no model was run)", "prompt": "1", "k": 5}
    out = next(o for o in judge.outputs.values() if o.types and "gender" in o.types)
    assert out.p_inaccurate == 1.0 and out.types == {"gender": 1.0, "clothing_type": 0.6}
    assert [(s.start, s.end, s.type, s.fix) for s in out.spans] == [(1, 2, "gender", "woman"),
                                                                      (4, 5, "clothing_type", "space suit")]
    assert out.flagged() == ("gender", "clothing_type")
    # apart from the human judgements: no judgement row, no layer, no agreement figure sees it
    assert judgement_frame(sample, "sample", kinds=("annotation", "adjudication")).empty


def test_reimport_replaces_and_says_how_many_change(sample, tmp_path):
    rows = [ROW, {"item": "chelsea.jpg", "system": "sat-attn", "p_inaccurate": 0.2},
            {"item": "coffee.jpg", "system": "sat-attn", "p_inaccurate": 0.6}]
    first = import_judge(sample, "sample", write(tmp_path, *rows))
    assert (first.outputs, first.replaced) == (3, False)
    again = import_judge(sample, "sample", write(tmp_path, *rows))
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 3)
    assert "0 captions change" in again.describe()
    new = [dict(ROW, p_inaccurate=0.4), rows[1], {"item": "rocket.jpg", "system": "nic-beam", "p_inaccurate": 1.0}]
    third = import_judge(sample, "sample", write(tmp_path, *new, header=dict(HEADER, k=3)))
    assert (third.added, third.changed, third.removed, third.unchanged, third.replaced) == (1, 1, 1, 1, True)
    assert "3 captions change (1 new, 1 changed, 1 removed, 1 unchanged)" in third.describe()
    stored = judges_of(sample)["vlm"]
    assert stored.outputs == 3 and stored.signature["k"] == 3


def test_rows_by_line_sample_and_the_studys_type_names(sample, tmp_path):
    rows = [{"system": "nic-beam", "line": 0, "p_inaccurate": 1.0,
             "types": {"type-of-clothing": 0.2, "Color of clothing": 1.0, "age": 0.8}},
            {"system": "sat-attn", "item": "hubble.jpg", "n": 0, "p_inaccurate": 1.0, "answers": ["{...}", "{...}"],
             "caption": "A black and white photo of a city at night"}]
    import_judge(sample, "sample", write(tmp_path, *rows), judge="renamed")
    judge = load_judge(sample, "sample", "renamed")
    by_types = [o for o in judge.outputs.values() if o.types]
    assert by_types[0].types == {"age": 0.8, "clothing_type": 0.2, "clothing_color": 1.0}
    assert judge.scored_types == ("age", "clothing_type", "clothing_color")
    assert [o.answers for o in judge.outputs.values() if o.answers] == [("{...}", "{...}")]


BAD = [
    (["{\"item\": \"astronaut.jpg\", \"system\": \"sat-attn\", \"p_inaccurate\": NaN}"], 2, "NaN is not a number"),
    (["{\"item\": \"astronaut.jpg\", \"item\": \"x\", \"system\": \"sat-attn\", \"p_inaccurate\": 1}"], 2,
     "appears twice"),
    ([dict(ROW, p_inaccurate=1.5)], 2, "p_inaccurate must be a probability from 0 to 1"),
    ([dict(ROW, p_inaccurate=True)], 2, "p_inaccurate must be a probability"),
    ([{"item": "astronaut.jpg", "system": "sat-attn"}], 2, "missing field 'p_inaccurate'"),
    ([dict(ROW, score=1)], 2, "unknown field 'score'"),
    ([dict(ROW, types={"colr": 0.5})], 2, "unknown error type label 'colr'"),
    ([dict(ROW, types={"gender": 2})], 2, "probability of 'gender'"),
    ([dict(ROW, types={"gender": 0.5, "Gender": 0.5})], 2, "names 'gender' twice"),
    ([dict(ROW, spans=[{"start": 12, "end": 14, "type": "gender"}])], 2, "ends beyond the caption"),
    ([dict(ROW, spans=[{"start": 1, "end": 3, "type": "gender"}, {"start": 2, "end": 4, "type": "gender"}])], 2,
     "overlaps"),
    ([dict(ROW, caption="a different caption")], 2, "caption differs from the stored one"),
    ([dict(ROW, item="nowhere.jpg")], 2, "no caption of system 'sat-attn' for item 'nowhere.jpg'"),
    ([dict(ROW, system="nope")], 2, "no system 'nope'"),
    ([{"system": "sat-attn", "line": 99, "p_inaccurate": 0.1}], 2, "for line 99"),
    ([ROW, {"item": "chelsea.jpg", "system": "sat-attn", "p_inaccurate": 0}, ROW], 4, "on line 2 already"),
    ([ROW, HEADER], 3, "a second header"),
    ([dict(ROW, answers="yes")], 2, "answers must be a list"),
]


@pytest.mark.parametrize("rows, line, message", BAD)
def test_bad_rows_name_file_and_line_and_store_nothing(sample, tmp_path, rows, line, message):
    good = write(tmp_path, ROW, name="before.jsonl")
    import_judge(sample, "sample", good)
    before = load_judge(sample, "sample", "vlm").outputs
    path = write(tmp_path, *rows)
    with pytest.raises(InputError) as info:
        import_judge(sample, "sample", path)
    assert message in str(info.value) and f"{path}, line {line}" in str(info.value)
    assert load_judge(sample, "sample", "vlm").outputs == before  # the earlier outputs stay as they were


@pytest.mark.parametrize("header, message", [
    (None, "the first line must be the header"),
    (dict(HEADER, version=2), "version 2 of the judge format is not known"),
    ({k: v for k, v in HEADER.items() if k != "model"}, "the header has no 'model'"),
    (dict(HEADER, judge="detectors"), "built-in detectors' name"),
    (dict(HEADER, k=0), "'k' (samples per caption) must be a whole number from 1"),
    (dict(HEADER, temperature=[1, 2]), "header field 'temperature' must be a text, a number"),
    ({k: v for k, v in HEADER.items() if k != "judge"}, "names no judge"),
])
def test_bad_headers(sample, tmp_path, header, message):
    path = write(tmp_path, ROW, header=header) if header is not None else write(tmp_path, ROW, ROW, header=None)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_judge(sample, "sample", path)
    assert judges_of(sample) == {}


def test_export_reads_back_and_the_command_line(sample, tmp_path, capsys):
    from annotator.config import SAMPLE_DIR
    code, out, err = run(capsys, "--db", sample.url, "import", "judge", "--project", "sample",
                         str(SAMPLE_DIR / "judge.jsonl"), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"] == 16
    exported = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "--db", sample.url, "judge", "export", "--project", "sample", "--judge", "sample-vlm",
                       "--output", str(exported))
    assert code == 0, err
    again = import_judge(sample, "sample", exported)
    assert (again.unchanged, again.changed, again.added, again.removed) == (16, 0, 0, 0)
    # the detectors export as a judge file too, and import under another name
    det = tmp_path / "det.jsonl"
    code, _, err = run(capsys, "--db", sample.url, "judge", "export", "--project", "sample", "--judge", "detectors",
                       "--output", str(det))
    assert code == 0, err
    with pytest.raises(InputError, match="built-in detectors' name"):
        import_judge(sample, "sample", det)
    assert import_judge(sample, "sample", det, judge="words").outputs == 16
    code, out, _ = run(capsys, "--db", sample.url, "judge", "list", "--project", "sample")
    assert code == 0 and out.splitlines()[0].startswith("detectors:") and "sample-vlm: model hand-written" in out
    code, out, _ = run(capsys, "--db", sample.url, "judge", "delete", "--project", "sample", "--judge", "words")
    assert code == 0 and "removed judge 'words' and its 16 outputs" in out
    code, _, err = run(capsys, "--db", sample.url, "import", "judge", "--project", "sample", str(tmp_path / "none"))
    assert code == 2 and "cannot read file" in err
