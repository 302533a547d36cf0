"""Every user-given string is shown as text, never as Markdown, on every page (AppTest).

A project whose names, keys, labels, captions, notes and accounts all carry Markdown that Streamlit would
act on — an image (the browser would fetch it), a link, KaTeX and a colour directive — is opened on every
page. Then every string the pages handed to Streamlit is read from the rendered elements, and wherever
Streamlit renders Markdown (headers, markdown, captions, alerts, metric labels and help, image captions,
widget labels and help, radio options, expander and tab labels) the payload must be there only in its
escaped form. Plain-text places (st.text, st.code, tables, select-box options, text fields, st.html, chart
specs) are exempt: there the characters are shown as they are.
"""

from __future__ import annotations

import re

import pytest

from annotator.adjudication import adjudicate
from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.correction import correct_caption, correctable_types
from annotator.io.human_scores import import_human_scores
from annotator.model import Box, Caption, Item, Mention, Project, Reference, Role
from annotator.store.projects import write_project
from annotator.ui import md_escape
from tests.apptest_helpers import app_test, page_test

HOST = "198.51.100.7"
IMAGE = f"![b](http://{HOST}/x.png)"
#: Markdown Streamlit would act on, and the raw pieces that must never reach a Markdown renderer unescaped.
PAYLOAD = f"{IMAGE}[l](http://{HOST}/)$x^2$:red[r]:material/home:"
RAW = ("![b](", "[l](http", "$x^2$", ":red[", ":material/home:")

PROJECT = "p" + PAYLOAD
SYSTEMS = ("s" + PAYLOAD, "t" + PAYLOAD)
ANNOTATORS = ("a" + IMAGE, "b" + IMAGE)
LEAD = "l" + IMAGE

#: (proto message, field) whose text Streamlit shows as it is, not as Markdown.
PLAIN = {
    ("Text", "body"), ("Code", "code_text"), ("Html", "body"),
    ("Selectbox", "options"), ("Selectbox", "raw_value"), ("Selectbox", "value"), ("Selectbox", "default"),
    ("MultiSelect", "options"), ("MultiSelect", "raw_values"), ("MultiSelect", "default"), ("MultiSelect", "value"),
    ("TextInput", "default"), ("TextInput", "value"), ("TextArea", "default"), ("TextArea", "value"),
    ("VegaLiteChart", "spec"), ("ArrowVegaLiteChart", "spec"), ("DownloadButton", "url"),
}


def _strings(message, out: list, where: str = ""):
    """(message type, field, text) of every string field of a protobuf message, nested ones included."""
    for field, value in message.ListFields():
        items = value if field.is_repeated else [value]
        for v in items:
            if field.type == field.TYPE_MESSAGE:
                _strings(v, out, message.DESCRIPTOR.name)
            elif field.type == field.TYPE_STRING and field.name not in ("id", "form_id", "key"):
                out.append((message.DESCRIPTOR.name, field.name, v))


def markdown_strings(at) -> list[tuple[str, str, str]]:
    """Every string of the rendered page that Streamlit treats as Markdown."""
    found: list = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            _strings(proto, found)
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else children or ()):
            walk(child)
    walk(at._tree)
    return [(kind, field, text) for kind, field, text in found if (kind, field) not in PLAIN]


def _becomes_a_link(text: str) -> bool:
    # Streamlit turns "http://…" in the text into a link even when every character is escaped.
    return re.search(r"(?i)https?:(?!\u2060)//", text.replace("\\", "")) is not None


def unescaped(at) -> list[tuple[str, str, str]]:
    """Markdown strings that still carry a raw payload piece or a URL that would become a link."""
    return [s for s in markdown_strings(at) if any(raw in s[2] for raw in RAW) or _becomes_a_link(s[2])]


def escaped_count(at) -> int:
    """How often an escaped payload reached a Markdown renderer (the check above then means something)."""
    return sum(md_escape(IMAGE) in text for _, _, text in markdown_strings(at))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from annotator.store import open_store
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'h.db'}")
    items = []
    for i in range(6):
        items.append(Item(
            key=f"k{i}" + PAYLOAD, width=320, height=240,
            boxes=[Box("1", "dog" + PAYLOAD, 10, 10, 100, 100), Box("2", "ball" + PAYLOAD, 150, 120, 40, 40)],
            references=[Reference(f"the dog chases a ball {i} " + PAYLOAD, (Mention(0, 2, ("1",)), Mention(3, 5, ("2",)))),
                        Reference(f"a dog plays with a ball number {i}", (Mention(0, 2, ("1",)),))],
            captions=[Caption(s, f"a cat sits on a sofa {i} {PAYLOAD}") for s in SYSTEMS]))
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, items=items))
    for name in ANNOTATORS:
        add_user(store, name, "annotator", None)
    add_user(store, LEAD, "admin", None)
    assign(store, PROJECT, list(ANNOTATORS), double_fraction=1.0, second_pass="full")
    etype = correctable_types()[0].id
    for name, label, types in ((ANNOTATORS[0], "inaccurate", (etype,)), (ANNOTATORS[1], "accurate", ())):
        q = Queue.open(store, name, Role.ANNOTATOR, PROJECT)
        for _ in range(3):
            task = q.task(q.first_todo())
            q.save(task, label, types, "note " + PAYLOAD, 2.0)
    with store.read() as conn:
        from sqlalchemy import text
        cid = conn.execute(text("SELECT caption_id FROM current_judgements ORDER BY caption_id")).scalars().first()
    adjudicate(store, cid, LEAD, "admin", "inaccurate", (etype,), note="decided " + PAYLOAD)
    correct_caption(store, cid, etype, ANNOTATORS[0], None)
    rows = "".join(f"{s},{i},{(i * 3 + k) % 5}\n" for k, s in enumerate(SYSTEMS) for i in range(6))
    import_human_scores(store, PROJECT, ("system,line,quality\n" + rows).encode())
    yield store
    store.dispose()


#: Pages that show a hostile name in a Markdown place (the others show them in tables and fields only).
SHOWN_IN_MARKDOWN = {"agreement", "adjudicate", "analysis", "correct", "content_selection", "diversity", "assign"}
PAGES = ["agreement", "adjudicate", "analysis", "correct", "rescore", "content_selection", "diversity", "data",
         "assign", "guidelines"]


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # the correction and rescoring pages without METEOR's start-up


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_hostile_names_as_text(hostile, page, no_java):
    at = page_test(page, hostile.url, user=LEAD, role="admin", project=PROJECT, create_user=False).run()
    assert not at.exception, at.exception
    assert unescaped(at) == []
    if page in SHOWN_IN_MARKDOWN:
        assert escaped_count(at), f"no hostile name reached a Markdown place on {page}"


def test_annotate_page_header_history_and_sidebar(hostile):
    at = app_test(hostile.url, user=ANNOTATORS[0], role="annotator", project=PROJECT, create_user=False).run()
    assert not at.exception
    assert f"Annotate · {md_escape(PROJECT)}" in [s.value for s in at.subheader]
    assert unescaped(at) == [] and escaped_count(at) >= 2  # header, item key, "Logged in as"


def test_error_messages_that_quote_input_are_text(hostile, monkeypatch):
    """An import that fails names the file and the project: the message is shown as text."""
    at = page_test("data", hostile.url, user=LEAD, role="admin", project=PROJECT, create_user=False)
    at.session_state["data_import_result"] = ("error", f"{IMAGE}.jsonl, line 3: project {PROJECT!r} …")
    at.run()
    assert at.error and unescaped(at) == []
    assert md_escape(IMAGE) in at.error[0].value
