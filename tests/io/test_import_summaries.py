"""Every import's summary (the line the command line prints and the Data page shows) counts what the import wrote,
by what it is: items, references, boxes and captions; judgements and their error spans; corrections; the accounts
it created. A judgements import used to open with "0 new items (1014 read)"."""

from __future__ import annotations

import json
from pathlib import Path

from annotator.cli import main
from annotator.config import SAMPLE_DIR
from annotator.io import import_corrections, import_judgements, import_jsonl, import_lines

FIX = Path(__file__).parent.parent / "fixtures"
LINES = FIX / "lines"
NO_PASSWORD = "(no password yet: an admin sets one on People, or with annotator users passwd NAME)"


def test_a_judgements_import_counts_judgements_and_the_account_it_created(store):
    import_lines(store, "p", "sys-b", LINES / "captions_b.txt", [LINES / "refs1.txt"])
    coarse, fine = FIX / "judgements" / "coarse.json", FIX / "judgements" / "fine.json"
    first = import_judgements(store, "p", "sys-b", "alice", coarse, fine)
    assert first.describe() == f"judgements import into 'p': 3 judgements by alice (3 read), new account alice {NO_PASSWORD}"
    again = import_judgements(store, "p", "sys-b", "alice", coarse, fine)
    assert again.describe() == "judgements import into 'p': 0 judgements by alice (3 read), 3 already stored unchanged"


def test_judgement_rows_count_their_error_spans_and_new_accounts(store):
    items = import_jsonl(store, "long", SAMPLE_DIR / "long_captions.jsonl")
    assert items.describe().startswith("jsonl import into 'long': 3 new items (3 read), ")
    assert items.describe().endswith(f", {items.captions} captions") and items.captions == 3
    rows_file = SAMPLE_DIR / "long_captions_judgements.jsonl"
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    spans = sum(len(r.get("spans") or ()) for r in rows)
    names = sorted({r["annotator"] for r in rows})
    assert spans > 0 and len(names) == 2  # the file is what the test says it is
    result = import_jsonl(store, "long", rows_file)
    assert result.describe() == (f"judgement rows import into 'long': {len(rows)} judgement revisions with {spans} "
                                 f"error spans by {', '.join(names)} ({len(rows)} rows read), new accounts "
                                 f"{', '.join(r for r in dict.fromkeys(r['annotator'] for r in rows))} {NO_PASSWORD}")
    assert (result.spans, sorted(result.accounts)) == (spans, names)


def test_a_corrections_import_names_the_account_it_created(store, tmp_path):
    import_lines(store, "p", "sys-b", LINES / "captions_b.txt", [LINES / "refs1.txt"])
    lines = (LINES / "captions_b.txt").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace(lines[0].split()[-1], "table")  # one word of the first caption changed
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_corrections(store, "p", "sys-b", "object_wrong", fixed, annotator="cora")
    assert result.describe() == (f"corrections import into 'p': 1 corrections by cora ({len(lines)} lines read), "
                                 f"new account cora {NO_PASSWORD}")


def test_the_command_line_prints_the_counts_and_its_json_holds_them(store, capsys):
    import_jsonl(store, "long", SAMPLE_DIR / "long_captions.jsonl")
    code = main(["--db", store.url, "import", "jsonl", "--project", "long",
                 str(SAMPLE_DIR / "long_captions_judgements.jsonl")])
    out = capsys.readouterr().out
    assert code == 0 and " judgement revisions with " in out and "error spans by sample-ann, sample-ben" in out
    assert "new items" not in out and "new accounts sample-ann, sample-ben" in out
    code = main(["--db", store.url, "import", "jsonl", "--project", "long", "--json",
                 str(SAMPLE_DIR / "long_captions_judgements.jsonl")])
    again = json.loads(capsys.readouterr().out)
    assert code == 0 and again["judgements"] == 0 and again["accounts"] == [] and again["spans"] == 0
    assert again["unchanged"] > 0
