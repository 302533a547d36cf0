"""Suggestions from a judge: who gets them (first annotators only: never the second annotator of a double-annotated
caption, never a practice item, never a corrector during blind correction with closed views), what they hold,
how each judgement records them, and the figures with and without."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.config import SAMPLE_DIR
from annotator.correction.blind import set_project_views_closed
from annotator.errors import NotFound, PermissionDenied
from annotator.exchange.judge_files import import_judge
from annotator.judges.report import suggestion_figures
from annotator.judges.suggestions import set_suggestion_judge, suggestion_judge
from annotator.model import Role
from annotator.sample import load_sample
from annotator.store.judges import annotation_rows
from annotator.store.projects import project_id, set_practice
from annotator.store.users import create_user
from tests.cli_helpers import run_cli as run


@pytest.fixture
def sample(store):
    load_sample(store, with_judgements=False)
    import_judge(store, "sample", SAMPLE_DIR / "judge.jsonl")
    with store.transaction() as conn:
        for name, role in (("ann", Role.ANNOTATOR), ("ben", Role.ANNOTATOR), ("cora", Role.ANALYST)):
            create_user(conn, name, role)
    assign(store, "sample", ["ann", "ben"], double_fraction=0.5, seed=1)
    return store


def tasks(store, user: str, role=Role.ANNOTATOR):
    q = Queue.open(store, user, role, "sample")
    return q, [q.task(p) for p in range(q.size())]


def test_off_until_a_lead_chooses_a_judge(sample, capsys):
    q, ts = tasks(sample, "ann")
    assert all(q.suggestion(t) is None for t in ts)
    with pytest.raises(PermissionDenied):
        set_suggestion_judge(sample, "sample", "sample-vlm", actor_role=Role.ANNOTATOR)
    with pytest.raises(NotFound, match="no judge called 'nope'"):
        set_suggestion_judge(sample, "sample", "nope")
    code, out, _ = run(capsys, "--db", sample.url, "judge", "suggestions", "--project", "sample", "--judge",
                       "sample-vlm")
    assert code == 0 and "starts from judge 'sample-vlm' for first annotators" in out
    assert suggestion_judge(sample, "sample") == "sample-vlm"
    code, out, _ = run(capsys, "--db", sample.url, "judge", "suggestions", "--project", "sample", "--off")
    assert code == 0 and suggestion_judge(sample, "sample") is None


def test_first_annotators_get_the_judges_answer_second_annotators_never(sample):
    set_suggestion_judge(sample, "sample", "sample-vlm")
    seen_first = seen_second = 0
    for user in ("ann", "ben"):
        q, ts = tasks(sample, user)
        for t in ts:
            s = q.suggestion(t)
            if t.is_second:
                assert s is None, "a second annotator of a double-annotated caption saw a judge"
                seen_second += 1
                continue
            seen_first += 1
            assert s is not None and s.judge == "sample-vlm"
            if t.caption.text.startswith("A man in an orange jacket"):
                assert (s.label, s.error_types, s.p_inaccurate) == ("inaccurate", ("gender", "clothing_type"), 1.0)
                assert [(x.start, x.end, x.type, x.fix) for x in s.spans] == [(1, 2, "gender", "woman"),
                                                                               (4, 5, "clothing_type", "space suit")]
            if t.caption.text.startswith("A close up of a tabby cat"):
                assert (s.label, s.error_types, s.spans) == ("accurate", (), ())  # p 0.2
    assert seen_first and seen_second >= 4


def test_never_for_practice_items_judged_captions_or_blind_correctors(sample):
    set_suggestion_judge(sample, "sample", "sample-vlm")
    q, ts = tasks(sample, "ann")
    first = next(t for t in ts if not t.is_second)
    assert q.suggestion(first) is not None
    q.save(first, "accurate", suggested=True)
    assert q.suggestion(q.task(first.position)) is None  # the annotator's own judgement is what the panel shows
    second = next(t for t in ts if not t.is_second and t.caption_id != first.caption_id)
    set_practice(sample, "sample", [second.item.key], True)
    assert q.suggestion(q.task(second.position)) is None
    assign(sample, "sample", ["cora"], double_fraction=0.0, replace=True)
    cq, cts = tasks(sample, "cora", Role.ANALYST)
    open_task = next(t for t in cts if not t.item.is_practice)
    assert cq.suggestion(open_task) is not None  # blind correction is on, but the views are open
    set_project_views_closed(sample, "sample", True)
    assert cq.suggestion(open_task) is None  # a corrector with closed views sees no judge


def test_each_judgement_records_its_suggestion_and_the_figures_compare_them(sample):
    set_suggestion_judge(sample, "sample", "sample-vlm")
    q, ts = tasks(sample, "ann")
    firsts = [t for t in ts if not t.is_second]
    done = []
    for n, t in enumerate(firsts[:6]):
        s = q.suggestion(t)
        with_suggestion = n % 2 == 0
        label = s.label if with_suggestion else "inaccurate"
        types = (s.error_types or ("other",)) if label == "inaccurate" else ()
        q.save(t, label, types, note="x" if "other" in types else "", seconds=10.0 + n, suggested=with_suggestion)
        done.append((t.caption_id, with_suggestion, label, s.label, 10.0 + n))
    with sample.read() as conn:
        rows = {r[0]: r for r in annotation_rows(conn, project_id(conn, "sample"))}
    assert [rows[c][5] for c, *_ in done] == [w for _, w, *_ in done]
    judge, effects = suggestion_figures(sample, "sample")
    assert judge == "sample-vlm"
    by_group = {e.group: e for e in effects}
    for group, wanted in (("with a suggestion", True), ("without a suggestion", False)):
        mine = [d for d in done if d[1] == wanted]
        e = by_group[group]
        assert e.judgements == len(mine)
        assert e.agreement.accuracy == pytest.approx(np.mean([d[2] == d[3] for d in mine]))
        assert e.median_seconds == pytest.approx(np.median([d[4] for d in mine]))
    assert by_group["with a suggestion"].agreement.accuracy == 1.0  # they took the judge's label every time
