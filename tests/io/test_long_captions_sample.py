"""The long-caption example project (data/sample/long_captions.jsonl and long_captions_judgements.jsonl): paragraphs of about 2,000 characters that import
with ``import jsonl``, with two demo annotators' error spans that read back and compare."""

from __future__ import annotations

import json

from annotator.config import SAMPLE_DIR
from annotator.span_agreement import span_agreement
from annotator.store.judgements import current_judgement
from annotator.store.projects import load_project
from annotator.store.users import user_id
from tests.cli_helpers import run_cli

PROJECT_FILE = SAMPLE_DIR / "long_captions.jsonl"
JUDGEMENTS_FILE = SAMPLE_DIR / "long_captions_judgements.jsonl"


def test_the_long_caption_project_imports_with_its_spans(sqlite_store, capsys):
    url = sqlite_store.url
    assert run_cli(capsys, "--db", url, "import", "jsonl", "--project", "long-captions", str(PROJECT_FILE))[0] == 0
    assert run_cli(capsys, "--db", url, "import", "jsonl", "--project", "long-captions", str(JUDGEMENTS_FILE))[0] == 0
    project = load_project(sqlite_store, "long-captions")
    texts = [c.text for it in project.items for c in it.captions]
    assert len(texts) == 3 and all(1900 <= len(t) <= 2100 for t in texts)
    assert project.image_root.endswith("sample/images")
    astronaut = next(it for it in project.items if it.key == "astronaut.jpg").captions[0]
    with sqlite_store.read() as conn:
        j = current_judgement(conn, astronaut.caption_id, user_id(conn, "sample-ann"))
    words = astronaut.text.split()
    marked = {(s.type, " ".join(words[s.start:s.end]), s.fix) for s in j.spans}
    assert ("gender", "is a man", "is a woman") in marked and ("clothing_color", "bright blue", "bright orange") in marked
    (pair,) = span_agreement(sqlite_store, "long-captions").summary()["spans"]["pairs"]
    assert pair["captions"] == 3 and 0 < pair["micro_f1"] < 1
    rows = [json.loads(x) for x in JUDGEMENTS_FILE.read_text(encoding="utf-8").splitlines()]
    assert {r["annotator"] for r in rows} == {"sample-ann", "sample-ben"}
