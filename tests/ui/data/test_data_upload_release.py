"""The Data page lets go of an upload once it is saved: the import runs from the saved file, and the form is drawn
again with empty uploaders (new keys), so the session no longer lists, and Streamlit no longer holds, the file.
The memory figure itself is measured against a real server (tests/reliability/test_upload_memory.py)."""

from __future__ import annotations

from annotator.io.options import EXAMPLES_DIR
from annotator.store.projects import project_names, table_counts
from tests.apptest_helpers import page_test, visible

EXAMPLE = (EXAMPLES_DIR / "jsonl" / "example.jsonl").read_bytes()


def _upload(at, project: str, name: str, data: bytes, key: str):
    at.selectbox(key="data_format").set_value("jsonl").run()
    at.text_input(key="data_jsonl_project").set_value(project)
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream"))
    return at.button[0].click().run()


def test_an_uploaded_file_imports_and_the_uploader_is_drawn_empty(sqlite_store):
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    _upload(at, "up", "example.jsonl", EXAMPLE, "data_jsonl_file")
    assert not at.exception
    assert [visible(s.value) for s in at.success] == [
        "jsonl import into 'up': 2 new items (2 read), 3 references, 1 boxes, 2 captions"]
    assert project_names(sqlite_store) == ["up"]
    assert [u.key for u in at.file_uploader] == ["data_jsonl_file_1"]
    # the next import goes through the new uploader, and a bad file is refused by its line
    before = table_counts(sqlite_store)
    _upload(at, "up2", "bad.jsonl", EXAMPLE + b"{not json\n", "data_jsonl_file_1")
    assert "bad.jsonl, line 4" in visible(at.error[0].value)
    assert table_counts(sqlite_store) == before
    assert [u.key for u in at.file_uploader] == ["data_jsonl_file_2"]
