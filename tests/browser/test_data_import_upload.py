"""The Data page's import form in Chromium: each catalog format's example files, uploaded as a user would, import.

AppTest cannot upload files, so this is where the page's side of the catalog
(uploads saved to a temporary folder, the form built from the declared options,
the run function called with ``command_line=False``) meets real files.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.exchange.catalog import formats
from annotator.limits import TEXT_LIMITS
from annotator.sample import SAMPLE_PROJECT, load_sample
from annotator.store.projects import table_counts
from tests.browser.conftest import choose_option, signed_in, wait_for_app

pytestmark = pytest.mark.browser

PW = "uploads all the way"
UPLOADED = [f for f in formats() if all(f.get_option(n).kind in ("file", "files") for n in f.example.files)]


def _fill(page, fmt, project: str) -> None:
    form = page.locator('[data-testid="stForm"]')
    values = {**fmt.example.values, **fmt.example.paths(fmt.name)}
    for o in fmt.options:
        value = values.get(o.name)
        if value is None:
            continue
        if o.kind in ("file", "files"):
            uploader = form.locator('[data-testid="stFileUploader"]').filter(has_text=o.label)
            files = value if o.kind == "files" else [value]
            uploader.locator('input[type="file"]').set_input_files([str(p) for p in files])
            for p in files:
                expect(uploader).to_contain_text(p.name)
        elif o.kind == "switch":
            if value:
                form.locator('[data-testid="stCheckbox"]').filter(has_text=o.label).locator("label").click()
        elif o.kind == "choice":
            choose_option(page, form.locator('[data-testid="stSelectbox"]').filter(has_text=o.label)
                          .get_by_role("combobox"), o.choice_label(value))
        else:
            form.get_by_label(o.label, exact=True).fill(str(value))
            expect(form.get_by_label(o.label, exact=True)).to_have_value(str(value))
    # The project last, once the form stands built for this format (a rerun in between would clear it)
    name = form.get_by_label("Project", exact=True)
    name.fill(project)
    expect(name).to_have_value(project)


def _open_import(page, server, fmt, user: str = "ada") -> None:
    """The Data page of ``user`` (an admin) with the import form of ``fmt`` drawn."""
    signed_in(page, server, user, PW)
    more = page.locator('[data-testid="stSidebarNavViewButton"]')  # the menu shows its first entries only
    if more.count():
        more.click()
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Data & users").click()
    wait_for_app(page)
    # Type into the import's Format box (the export has one too) to filter the list: a long list draws only
    # the options in view, so the last formats are not there to click until the list is filtered.
    box = page.get_by_role("combobox", name="Format").first
    box.click()
    box.fill(fmt.title[:24])
    page.get_by_role("option", name=fmt.title, exact=True).click()
    wait_for_app(page)
    # the rerun for the chosen format has drawn its form before anything is typed into it
    expect(page.get_by_role("combobox", name="Format").first).to_have_value(fmt.title)
    for o in fmt.options:
        expect(page.locator('[data-testid="stForm"]')).to_contain_text(o.label)


@pytest.mark.parametrize("fmt", UPLOADED, ids=[f.name for f in UPLOADED])
def test_example_uploads_import_on_the_data_page(server, page, fmt):
    store = server.store()
    add_user(store, "ada", "admin", PW)
    if fmt.example.into_sample:
        load_sample(store, with_judgements=False)
    project = SAMPLE_PROJECT if fmt.example.into_sample else "example"
    before = table_counts(store)
    _open_import(page, server, fmt)
    _fill(page, fmt, project)
    page.locator('[data-testid="stForm"]').get_by_role("button", name="Import").click()
    wait_for_app(page)
    expect(page.locator('[data-testid="stAlertContentSuccess"]')).to_be_visible()
    assert table_counts(store) != before
    store.dispose()


def test_an_uploaded_caption_over_the_length_limit_is_refused_by_file_and_line(server, page, tmp_path):
    """The upload path applies the importers' caption limit (annotator.limits.TEXT_LIMITS): the message names the
    uploaded file and the line, and nothing is stored."""
    limit = TEXT_LIMITS["caption"]
    store = server.store()
    add_user(store, "ada", "admin", PW)
    captions, references = tmp_path / "long-captions.txt", tmp_path / "refs.txt"
    captions.write_text("a dog runs\n" + ("a very long description " * 500)[:limit + 1] + "\n", encoding="utf-8")
    references.write_text("a dog is running\na cat sleeps\n", encoding="utf-8")
    fmt = next(f for f in formats() if f.name == "lines")
    _open_import(page, server, fmt)
    form = page.locator('[data-testid="stForm"]')
    form.get_by_label("System name", exact=True).fill("vlm")
    for label, path in (("Captions file (one per line)", captions), ("Reference files (line-aligned)", references)):
        uploader = form.locator('[data-testid="stFileUploader"]').filter(has_text=label)
        uploader.locator('input[type="file"]').set_input_files([str(path)])
        expect(uploader).to_contain_text(path.name)
    form.get_by_label("Project", exact=True).fill("too-long")
    before = table_counts(store)  # after the log-in's session and the page's settings
    form.get_by_role("button", name="Import").click()
    wait_for_app(page)
    error = page.locator('[data-testid="stAlertContentError"]')
    expect(error).to_contain_text("long-captions.txt, line 2")
    expect(error).to_contain_text(f"is {limit + 1:,} characters long; at most {limit:,} are allowed")
    assert table_counts(store) == before


def test_a_label_studio_file_cannot_write_under_anothers_account_on_the_data_page(server, page, tmp_path):
    """Addresses that name accounts only by the part before "@" (one of them with ground truth) write nothing under
    those accounts and make no lead or admin, through the page as through the command line."""
    import json

    from annotator.accounts.auth import list_users, set_email
    from annotator.judgement_export import export_judgements
    store = server.store()
    add_user(store, "boss", "admin", PW, email="boss@lab.example.org")
    load_sample(store)
    set_email(store, "sample-ann", "sample-ann@lab.example.org")
    caption = "A man in an orange jacket smiling in front of an american flag"
    result = [{"id": "j", "from_name": "judgement", "to_name": "caption", "type": "choices",
               "value": {"choices": ["accurate"]}}]
    tasks = [{"id": 1, "data": {"caption": caption, "system": "sat-attn", "item": "astronaut.jpg"}, "annotations": [
        {"id": 11, "completed_by": {"email": "Sample-Ann@attacker.example"}, "result": result},
        {"id": 12, "completed_by": {"email": "BOSS@evil.org"}, "result": result, "ground_truth": True}]}]
    upload = tmp_path / "label-studio.json"
    upload.write_text(json.dumps(tasks), encoding="utf-8")
    rows = export_judgements(store, SAMPLE_PROJECT, history=True).rows
    before = rows[rows["annotator"].isin(["sample-ann", "boss"])].to_dict("records")
    fmt = next(f for f in formats() if f.name == "label-studio")
    _open_import(page, server, fmt, user="boss")
    form = page.locator('[data-testid="stForm"]')
    uploader = form.locator('[data-testid="stFileUploader"]').filter(has_text=fmt.get_option("file").label)
    uploader.locator('input[type="file"]').set_input_files(str(upload))
    expect(uploader).to_contain_text(upload.name)
    form.get_by_label("Project", exact=True).fill(SAMPLE_PROJECT)
    form.get_by_role("button", name="Import").click()
    wait_for_app(page)
    success = page.locator('[data-testid="stAlertContentSuccess"]')
    expect(success).to_contain_text("new account Sample-Ann-2")
    expect(success).to_contain_text("ground truth by BOSS-2, stored as an annotation")
    rows = export_judgements(store, SAMPLE_PROJECT, history=True).rows
    assert rows[rows["annotator"].isin(["sample-ann", "boss"])].to_dict("records") == before
    assert sorted(rows[rows["annotator"].isin(["Sample-Ann-2", "BOSS-2"])]["kind"]) == ["annotation", "annotation"]
    assert {u.name: u.role for u in list_users(store)} == {"boss": "admin", "sample-ann": "annotator",
                                                         "sample-ben": "annotator", "Sample-Ann-2": "annotator",
                                                         "BOSS-2": "annotator"}
    store.dispose()
