"""The data page: project list, import (server-side folder form), export, and the role guard."""

from __future__ import annotations

from pathlib import Path

from annotator.sample import load_sample
from annotator.store.projects import project_names, table_counts
from tests.apptest_helpers import page_test, refused, texts, visible

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def test_lists_projects_and_prepares_export(sqlite_store):
    load_sample(sqlite_store, with_judgements=False)
    at = page_test("data", sqlite_store.url, user="lea", role="lead", project="sample").run()
    assert not at.exception
    df = at.dataframe[0].value
    assert list(df["project"]) == ["sample"] and int(df["items"].iloc[0]) == 8
    assert df["systems"].iloc[0] == "sat-attn, nic-beam"
    at.button(key="data_export_prepare").click().run()
    assert not at.exception
    assert not at.error
    # The download button is only offered once the export is prepared.
    assert [b.label for b in at.get("download_button")] == ["Download sample.jsonl (8 items)"]
    assert at.session_state["data_export"][2].decode("utf-8").count("\n") == 9  # header + 8 items


def test_flickr30k_import_from_a_server_folder(sqlite_store):
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    assert "There is no project yet" in texts(at)
    at.selectbox(key="data_format").set_value("flickr30k").run()
    at.text_input(key="data_flickr30k_project").set_value("f30k")
    at.text_input(key="data_f30k_root").set_value(str(FIX / "flickr30k"))
    at.button[0].click().run()  # the form's submit button
    assert not at.exception
    assert [visible(s.value) for s in at.success] == ["flickr30k import into 'f30k': 2 new items (2 read), 10 references, 7 boxes, 0 captions"]
    assert project_names(sqlite_store) == ["f30k"]


def test_bad_import_shows_the_message_and_stores_nothing(sqlite_store, tmp_path):
    root = tmp_path / "f"
    (root / "Sentences").mkdir(parents=True)
    (root / "Annotations").mkdir()
    (root / "Sentences" / "7.txt").write_text("[/EN#1/people A man walks .\n", encoding="utf-8")
    (root / "Annotations" / "7.xml").write_text("<annotation/>", encoding="utf-8")
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    before = table_counts(sqlite_store)  # after the page test created the user's account row
    at.selectbox(key="data_format").set_value("flickr30k").run()
    at.text_input(key="data_flickr30k_project").set_value("broken")
    at.text_input(key="data_f30k_root").set_value(str(root))
    at.button[0].click().run()
    assert [e.value for e in at.error] and "7.txt, line 1" in visible(at.error[0].value) and "malformed" in at.error[0].value
    assert table_counts(sqlite_store) == before


def test_missing_fields_are_named(sqlite_store):
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    at.selectbox(key="data_format").set_value("lines").run()
    at.button[0].click().run()
    assert visible(at.error[0].value) == "please fill in: project, system, captions, references"


def test_annotators_may_not_open_the_page(sqlite_store):
    at = refused("data", sqlite_store.url, user="ann", role="annotator")
    assert not at.dataframe


def test_every_uploader_states_what_it_takes_and_its_size_limit(sqlite_store):
    """Issue 24 item 19: beside each uploader, one file or several, the limit per file, and the command line."""
    from annotator.ui.data.page import formats
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    checked = 0
    for fmt in formats():
        uploads = [o for o in fmt.options if o.kind in ("file", "files")]
        if not uploads:
            continue
        at.selectbox(key="data_format").set_value(fmt.name).run()
        said = [c.value for c in at.caption if "MB each" in c.value]
        assert len(said) == len(uploads), (fmt.name, said)
        for option, text in zip(uploads, said):
            assert text.startswith("Several files" if option.kind == "files" else "One file"), text
            assert "up to 200 MB each" in text and f"annotator import {fmt.name}" in text
        checked += 1
    assert checked >= 2


def test_the_import_message_stands_beside_the_import_button(sqlite_store):
    """Issue 24 item 19: the outcome is said next to the Import button, not below the whole form."""
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    at.selectbox(key="data_format").set_value("lines").run()
    at.button[0].click().run()
    (form,) = at.get("form")
    (row,) = [b for b in form.children.values() if b.type == "flex_container"
              and any(getattr(w, "label", None) == "Import" for c in b.children.values() for w in c.children.values())]
    beside = [w for c in row.children.values() for w in c.error]
    assert [visible(w.value) for w in beside] == ["please fill in: project, system, captions, references"]

