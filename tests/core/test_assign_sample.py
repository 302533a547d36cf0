"""Sample draws on stored projects (SQLite and PostgreSQL): assign --active/--random records every drawn caption's
inclusion probability, queues the drawn captions, and annotator estimate weights the labels by them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotator.assignment import assign, assign_sample, sample_draws
from annotator.accounts.auth import add_user
from annotator.cli import main
from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.estimate import HumanLabels, detect, estimate_report, evidence_of_item
from annotator.estimate.ppi import SampleDraw
from annotator.estimate.sampling import TARGETS, allocate, draw_seed
from annotator.store.assignments import draw_members, user_queue
from annotator.store.judgements import insert_judgement
from annotator.store.projects import project_id, system_id
from annotator.store.users import user_id
from tests.apptest_helpers import page_test
from tests.cli_helpers import run_cli as run
from tests.core.test_estimate_cli import PROJECT, build_street

N_ITEMS = 160  # the last item is a practice item: 159 captions per system count


def street(store, labelled=()):
    project, truth, _ = build_street(store, n=N_ITEMS, labelled=np.asarray(labelled, dtype=np.int64))
    add_user(store, "bea", "annotator")
    return project, truth


def poor_scores(project):
    """The detector scores of system poor's captions (practice item left out), computed without the store."""
    items = project.items[:N_ITEMS - 1]
    det = detect([c.text for it in items for c in it.captions if c.system == "poor"], list(range(len(items))),
                 [evidence_of_item(it) for it in items])
    return det, [c.caption_id for it in items for c in it.captions if c.system == "poor"]


def label(store, project, truth, system, rows, who="ann"):
    ids = [c.caption_id for it in project.items for c in it.captions if c.system == system]
    with store.transaction() as conn:
        uid = user_id(conn, who)
        for r in rows:
            types = truth[system][r]
            insert_judgement(conn, ids[r], uid, label="inaccurate" if types else "accurate", error_types=types)


def members(store):
    with store.read() as conn:
        return draw_members(conn, project_id(conn, PROJECT))


def test_a_draw_records_its_probabilities_and_queues_the_drawn_captions(store):
    project, truth = street(store, labelled=range(20))  # ann labelled the first 20 captions of both systems
    summary = assign_sample(store, PROJECT, ["ann", "bea"], 40, systems=["poor"], layer="annotator:ann", seed=3)
    (d,) = summary.draws
    det, ids = poor_scores(project)
    # the same probabilities and the same coins, recomputed without the store
    rows = np.arange(20)
    human = HumanLabels.from_lists(rows, [bool(truth["poor"][r]) for r in rows], [truth["poor"][r] for r in rows])
    from annotator.estimate.sampling import interval_widths
    alloc = allocate({t: det.score(t) for t in TARGETS}, human, 40,
                     widths=interval_widths(estimate_report(det, human)))
    with store.read() as conn:
        sid = system_id(conn, project_id(conn, PROJECT), "poor")
    taken = alloc.draw(draw_seed(3, sid, 1))
    stored = {r.caption_id: r.probability for r in members(store)}
    assert stored == pytest.approx({ids[r]: alloc.probabilities[r] for r in taken})
    assert all(stored[ids[r]] == 1.0 for r in range(20))  # labelled before: taken for certain
    fresh = [ids[r] for r in taken if r >= 20]
    assert (d.taken, d.labelled_before, d.candidates, d.number) == (len(fresh), 20, 139, 1)
    assert d.targets == alloc.targets and set(d.widths) == set(alloc.targets)
    assert min(stored[c] for c in fresh) >= 0.2 * 40 / 139 - 1e-9
    # the fresh captions are queued, one annotator each, shared out evenly, after the practice item
    with store.read() as conn:
        pid = project_id(conn, PROJECT)
        queues = {n: user_queue(conn, user_id(conn, n), pid) for n in ("ann", "bea")}
    practice_id = project.items[-1].captions[1].caption_id
    for n, q in queues.items():
        assert q[0].caption_id == practice_id and [r.position for r in q] == list(range(len(q)))
        assert not any(r.is_second for r in q)
    queued = [r.caption_id for q in queues.values() for r in q[1:]]
    assert sorted(queued) == sorted(fresh)
    assert abs(len(queues["ann"]) - len(queues["bea"])) <= 1
    assert summary.practice_added == {"ann": 1, "bea": 1}
    # a second draw gets fresh coins and adds to the end of the queues
    second = assign_sample(store, PROJECT, ["ann", "bea"], 10, systems=["poor"], layer="annotator:ann", seed=3)
    assert second.draws[0].number == 2 and not second.practice_added
    with store.read() as conn:
        ann_queue = user_queue(conn, user_id(conn, "ann"), project_id(conn, PROJECT))
    assert ann_queue[:len(queues["ann"])] == queues["ann"]
    history = sample_draws(store, PROJECT)
    assert [(h["number"], h["design"], h["taken"], h["size"]) for h in history] == \
        [(1, "active", d.taken, 40), (2, "active", second.draws[0].taken, 10)]


def test_the_weights_round_trip_into_annotator_estimate(store, capsys):
    project, truth = street(store)
    summary = assign_sample(store, PROJECT, ["ann"], 60, systems=["poor"])
    det, ids = poor_scores(project)
    row_of = {c: r for r, c in enumerate(ids)}
    drawn = {row_of[m.caption_id]: m.probability for m in members(store)}
    label(store, project, truth, "poor", sorted(drawn))
    label(store, project, truth, "poor", range(100, 130))  # labelled outside the draw: left out
    code = main(["--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--system", "poor",
                 "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    rows = np.array(sorted(drawn))
    draw = SampleDraw(summary.draws[0].draw_id, rows, np.array([drawn[r] for r in rows]))
    human = HumanLabels.from_lists(rows, [bool(truth["poor"][r]) for r in rows], [truth["poor"][r] for r in rows],
                                   draws=[draw])
    core = estimate_report(det, human, system="poor")
    assert data["n_human"] == len(rows) == core.n_human
    assert data["inaccurate"]["estimate"] == pytest.approx(core.inaccurate.estimate)
    assert data["inaccurate"]["ci"] == pytest.approx([max(0, core.inaccurate.ci[0]), min(1, core.inaccurate.ci[1])])
    assert data["types"]["gender"]["estimate"] == pytest.approx(core.types["gender"].estimate)
    assert data["sampling"] == {"design": "draws", "draws": [
        {"draw": draw.draw_id, "drawn": len(rows), "labelled": len(rows), "share": 1.0}]}
    assert any("in no draw" in n for n in data["notes"])
    assert not any("random sample" in w for w in data["warnings"])
    # the weights matter: the unweighted reading of the same labels differs
    plain = estimate_report(det, HumanLabels.from_lists(rows, human.inaccurate, human.types), system="poor")
    assert plain.inaccurate.estimate != pytest.approx(core.inaccurate.estimate)
    # the other system has no draw: read as before, a random sample assumed
    label(store, project, truth, "good", range(0, 150, 3))
    code = main(["--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {s: r["sampling"]["design"] for s, r in data["systems"].items()} == {"poor": "draws",
                                                                                  "good": "random sample"}


def test_a_draw_with_too_few_labels_is_a_message_not_a_guess(store):
    project, truth = street(store)
    assign_sample(store, PROJECT, ["ann"], 20, systems=["good"], design="uniform")
    ids = [c.caption_id for it in project.items for c in it.captions if c.system == "good"]
    drawn = sorted(ids.index(m.caption_id) for m in members(store))
    label(store, project, truth, "good", [drawn[0]] + [r for r in range(0, 150, 2) if r not in drawn])
    from annotator.estimate.project import estimate_store
    with pytest.raises(InputError, match="system 'good'.*no recorded draw has two labelled captions"):
        estimate_store(store, PROJECT, "annotator:ann", systems=["good"])


def test_the_double_sample_and_practice_items_are_left_alone(store):
    project, truth = street(store)
    assign(store, PROJECT, ["ann", "bea"], double_fraction=0.1, seed=1, systems=["good"])
    with store.read() as conn:
        pid = project_id(conn, PROJECT)
        before = {n: user_queue(conn, user_id(conn, n), pid) for n in ("ann", "bea")}
    summary = assign_sample(store, PROJECT, ["ann", "bea"], 30, systems=["poor"], design="uniform")
    with store.read() as conn:
        after = {n: user_queue(conn, user_id(conn, n), pid) for n in ("ann", "bea")}
    for n in before:
        assert after[n][:len(before[n])] == before[n]
        assert not any(r.is_second for r in after[n][len(before[n]):])
    assert summary.practice_added == {}  # both queues had their practice item already
    practice_ids = {c.caption_id for c in project.items[-1].captions}
    assert not practice_ids & {m.caption_id for m in members(store)}
    assert [m.probability for m in members(store)] == pytest.approx([30 / 159] * summary.draws[0].taken)


def test_bad_requests_change_nothing(store):
    street(store)
    cases = [
        (dict(annotators=["ann"], size=0), InputError, "at least 1"),
        (dict(annotators=["nobody"], size=5), InputError, "nobody"),
        (dict(annotators=["ann"], size=5, systems=["nope"]), NotFound, "nope"),
        (dict(annotators=["ann"], size=5, design="clever"), InputError, "clever"),
        (dict(annotators=["ann"], size=5, targets=["colourz"]), InputError, "colourz"),
        (dict(annotators=["ann"], size=5, layer="annotator:bea"), NotFound, "bea"),
        (dict(annotators=["ann"], size=5, floor=1.5), InputError, "floor"),
        (dict(annotators=["ann"], size=5, actor_role="annotator"), PermissionDenied, "assigning"),
    ]
    for kw, error, words in cases:
        with pytest.raises(error, match=words):
            assign_sample(store, PROJECT, kw.pop("annotators"), kw.pop("size"), **kw)
    assert sample_draws(store, PROJECT) == [] and members(store) == []


def test_a_system_of_practice_items_only_has_nothing_to_draw(store):
    from tests.apptest_helpers import seed_project
    seed_project(store, "drill", n_items=3, practice=3)
    add_user(store, "bea", "annotator")
    with pytest.raises(NotFound, match="practice items are never drawn"):
        assign_sample(store, "drill", ["bea"], 2)
    assert sample_draws(store, "drill") == []


def test_cli_active_and_random_draws(store, capsys):
    project, truth = street(store, labelled=range(40))
    code, out, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "ann", "bea",
                         "--active", "30", "--system", "poor", "--layer", "annotator:ann", "--seed", "2")
    assert code == 0, err
    assert "system 'poor', draw 1 (active, seed 2, labels of annotator:ann)" in out
    assert "the 40 labelled already count for certain" in out and "aimed at: inaccurate (interval" in out
    code, out, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "bea",
                         "--random", "10", "--targets", "gender", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [(d["system"], d["design"], d["number"]) for d in data["draws"]] == [("good", "uniform", 1),
                                                                                ("poor", "uniform", 2)]
    assert all(d["per_annotator"].keys() == {"bea"} for d in data["draws"])
    for argv, words in [(["--active", "5", "--replace"], "--replace does not apply"),
                        (["--random", "5", "--double-fraction", "0.2"], "--double-fraction does not apply"),
                        (["--floor", "0.3"], "add --active"),
                        (["--active", "5", "--targets", "nonsense"], "nonsense"),
                        (["--active", "-3"], "at least 1")]:
        code, out, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "ann", *argv)
        assert code == 2 and words in err, (argv, err)
    assert len(sample_draws(store, PROJECT)) == 3


def test_assignment_page_draws_a_sample(sqlite_store):
    project, truth = street(sqlite_store, labelled=range(30))
    at = page_test("assign", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    assert not at.exception
    # ann and bea have no password, so they cannot log in and are not pre-selected: the lead picks them
    assert at.multiselect(key="sample_annotators").value == []
    at.multiselect(key="sample_annotators").set_value(["ann", "bea"])
    at.multiselect(key="sample_systems").set_value(["poor"])
    at.number_input(key="sample_size").set_value(25)
    at.selectbox(key="sample_layer").set_value("annotator:ann")
    at.multiselect(key="sample_targets").set_value(["gender"])
    at.button(key="FormSubmitter:sample_form-Draw and queue").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (draw,) = sample_draws(sqlite_store, PROJECT)
    assert (draw["system"], draw["design"], draw["size"], draw["targets"], draw["layer"]) == \
        ("poor", "active", 25, "gender", "annotator:ann")
    assert any(f"Drew {draw['taken']} captions in 1 draws" in s.value for s in at.success)
    assert any("Sample draws so far (1)" in e.label for e in at.expander)
    # a bad request is a message, and nothing is written
    at.multiselect(key="sample_annotators").set_value([])
    at.button(key="FormSubmitter:sample_form-Draw and queue").click().run()
    assert any("at least one annotator" in e.value for e in at.error)
    assert len(sample_draws(sqlite_store, PROJECT)) == 1


def test_estimates_page_weights_a_drawn_sample_like_the_command_line(sqlite_store, capsys):
    project, truth = street(sqlite_store)
    assign_sample(sqlite_store, PROJECT, ["ann"], 50, systems=["poor"])
    ids = [c.caption_id for it in project.items for c in it.captions if c.system == "poor"]
    label(sqlite_store, project, truth, "poor", sorted(ids.index(m.caption_id) for m in members(sqlite_store)))
    label(sqlite_store, project, truth, "good", range(0, 150, 3))
    at = page_test("estimate", sqlite_store.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert not at.exception
    assert main(["--db", sqlite_store.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--system", "poor",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["sampling"]["design"] == "draws"
    table = at.dataframe[0].value
    poor = table[(table["system"] == "poor") & (table["type"] == "Inaccurate (any error)")].iloc[0]
    assert poor["estimate"] == f"{100 * cli['inaccurate']['estimate']:.1f} %"  # the page writes shares as the cards do
    lo, hi = cli["inaccurate"]["ci"]
    assert poor["interval"] == f"{100 * lo:.1f}–{100 * hi:.1f}%" + ("*" if cli["inaccurate"]["sparse"] else "")
    assert any("recorded draw" in t.value for t in at.text)


def test_an_active_draw_without_detector_evidence_is_refused(store, capsys):
    """Images without references or box labels: the detectors score every caption alike, so an 'active' draw
    would silently be uniform. It is refused with a message naming the system and the way out; nothing is
    recorded; a uniform draw still works."""
    from annotator.model import Caption, Item, Project
    from annotator.store.projects import write_project
    items = [Item(key=f"img{i}", references=[], captions=[Caption("bare", f"A dog number {i} on a sofa")])
             for i in range(60)]
    with store.transaction() as conn:
        write_project(conn, Project("bare", items=items))
    add_user(store, "bea", "annotator")
    code, out, err = run(capsys, "--db", store.url, "assign", "--project", "bare", "--annotators", "bea",
                         "--active", "10")
    assert code != 0 and "system 'bare'" in err and "would be uniform" in err and "--random" in err
    assert sample_draws(store, "bare") == []
    code, out, err = run(capsys, "--db", store.url, "assign", "--project", "bare", "--annotators", "bea",
                         "--random", "10")
    assert code == 0, err
    assert [d["design"] for d in sample_draws(store, "bare")] == ["uniform"]
