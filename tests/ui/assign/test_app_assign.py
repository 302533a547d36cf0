"""The assignment page through AppTest (leads and admins only)."""

from __future__ import annotations

from annotator.assignment import assignment_overview, second_pass_mode
from annotator.accounts.auth import add_user
from tests.apptest_helpers import page_test, seed_project, texts, visible


def test_lead_assigns_a_project(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=20)
    for n in ("ann1", "ann2", "ann3"):
        add_user(sqlite_store, n, "annotator", "correct horse battery")
    at = page_test("assign", sqlite_store.url, user="lea", role="lead", project="demo").run()
    assert not at.exception
    assert "Nothing in this project is assigned yet." in texts(at)
    # Annotator accounts that can log in are preselected; the lead is not.
    assert at.multiselect(key="assign_annotators").value == ["ann1", "ann2", "ann3"]
    at.number_input(key="assign_fraction").set_value(0.25)
    at.number_input(key="assign_seed").set_value(4)
    at.radio(key="assign_second_pass").set_value("full")
    at.form_submit_button[0].click().run()
    assert not at.exception and not at.error
    assert any("5 are double-annotated" in s.value for s in at.success)
    # The box at the top shows the new queues in the same run (issue 24 item 11).
    assert "Nothing in this project is assigned yet." not in texts(at)
    assert any(sub.value == "Current queues" for sub in at.subheader)
    rows = {r["name"]: r for r in assignment_overview(sqlite_store, "demo")}
    assert sum(r["second"] for r in rows.values()) == 5
    assert sum(r["assigned"] for r in rows.values()) == 25
    assert second_pass_mode(sqlite_store, "demo") == "full"
    # A second run without "replace" is refused with an explanation.
    at.form_submit_button[0].click().run()
    assert any("has assignments already" in e.value for e in at.error)
    at.checkbox(key="assign_replace").check()
    at.multiselect(key="assign_annotators").set_value(["ann1", "ann2"])
    at.form_submit_button[0].click().run()
    assert not at.error
    assert set(r["name"] for r in assignment_overview(sqlite_store, "demo")) == {"ann1", "ann2"}


def test_practice_items_from_the_page(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=4)
    at = page_test("assign", sqlite_store.url, user="adm", role="admin", project="demo").run()
    at.text_area(key="assign_practice_keys").input("img0.jpg\nimg1.jpg")
    at.button(key="assign_practice_True").click().run()
    assert any("2 items changed" in s.value for s in at.success)
    at.text_area(key="assign_practice_keys").input("nope.jpg")
    at.button(key="assign_practice_True").click().run()
    assert any("nope.jpg" in visible(e.value) for e in at.error)


def test_annotator_and_analyst_cannot_assign(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=4)
    for role in ("annotator", "analyst"):
        at = page_test("assign", sqlite_store.url, user=f"u_{role}", role=role, project="demo").run()
        assert any("Not allowed" in e.value for e in at.error)
        assert not at.form_submit_button


def test_the_page_module_does_not_pull_in_the_estimators():
    """Issue 24 item 20: the Assignment page's first content does not wait for scipy.stats (imported with the
    estimators, 0.7–2.8 s on a first visit); the sample form imports them after the queues are drawn."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    code = "import sys, annotator.ui.assign; print('scipy.stats' in sys.modules, 'annotator.estimate' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert out.stdout.split() == ["False", "False"], (out.stdout, out.stderr)
