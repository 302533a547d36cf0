"""A judgement's working time lies between 0 and a day (annotator.limits.MAX_SECONDS) on every path that stores it.

Judgement rows read by `import jsonl`, the Label Studio `lead_time`, a save through the Python API (the store's
own check, whatever the caller), the pages' timers (held to a day rather than refused: a tab left open over a
weekend is not an error of the annotator's). `annotator team` prints a median of at most a day even when an
older store holds 1e308 seconds. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import update

from annotator.annotation import Queue
from annotator.errors import InputError
from annotator.io import import_jsonl
from annotator.exchange.label_studio import import_label_studio
from annotator.limits import MAX_SECONDS, check_seconds, measured_seconds
from annotator.store.codec import working_hundredths
from annotator.store.schema import current_judgements, judgements
from tests.cli_helpers import run_cli
from tests.store_helpers import annotated_project, refused


def test_the_bound_is_a_day_and_every_other_value_is_named():
    assert MAX_SECONDS == 86_400
    assert check_seconds(None) == 0.0 and check_seconds(0) == 0.0 and check_seconds(MAX_SECONDS) == MAX_SECONDS
    assert type(check_seconds(12)) is float
    for bad in (1e308, MAX_SECONDS + 0.01, 10**400, float("nan"), float("inf"), -1, True, "12"):
        with pytest.raises(InputError) as info:
            check_seconds(bad, "lead_time", "export.json", "task 7")
        message = str(info.value)
        assert message.startswith("export.json, task 7: lead_time must be a number of seconds"), message
        assert len(message) < 160  # never the 401 digits of 10**400


def test_a_page_timer_is_held_to_a_day():
    assert measured_seconds(100.0, 112.3456) == 12.35
    assert measured_seconds(0.0, 5 * MAX_SECONDS) == MAX_SECONDS
    assert measured_seconds(10.0, 9.0) == 0.0  # a clock that went back is no negative time


@pytest.fixture
def project(store):
    return store, annotated_project(store)


def _rows_file(tmp_path, seconds, annotator: str = "ann1") -> str:
    row = {"project": "p", "system": "sys-a", "item": "img0.jpg", "annotator": annotator, "label": "inaccurate",
           "error_types": ["gender"], "seconds": seconds}
    path = tmp_path / "rows.jsonl"
    # json.dumps writes 1e308 as it is; a file may also carry a longer number that parses to it.
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return str(path)


def test_every_storing_path_refuses_more_than_a_day(project, tmp_path):
    store, caps = project
    refused(store, lambda: import_jsonl(store, "p", _rows_file(tmp_path, 1e308)), "rows.jsonl, line 1",
            "seconds must be a number of seconds from 0 to 86,400 (a day), got 1e+308")
    q = Queue.open(store, "ann1", "annotator", "p")
    task = q.task(0)
    refused(store, lambda: q.save(task, "inaccurate", ["gender"], seconds=1e308), "from 0 to 86,400")
    refused(store, lambda: q.skip(task, seconds=MAX_SECONDS + 1), "from 0 to 86,400")
    assert q.save(task, "inaccurate", ["gender"], seconds=MAX_SECONDS).revision == 1
    assert import_jsonl(store, "p", _rows_file(tmp_path, MAX_SECONDS, "ann2")).judgements == 1


def test_a_label_studio_lead_time_above_a_day_is_refused(project, tmp_path):
    store, _ = project
    task = {"id": 1, "data": {"system": "sys-a", "item": "img0.jpg", "caption": "sys-a says: a cat sits on a sofa "
                                                                             "number 0"},
            "annotations": [{"id": 3, "completed_by": {"email": "ann1@x"}, "lead_time": 1e308,
                             "result": [{"from_name": "judgement", "type": "choices",
                                         "value": {"choices": ["accurate"]}}]}]}
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    refused(store, lambda: import_label_studio(store, "p", path), "ls.json", "from 0 to 86,400")


def test_team_never_prints_a_309_digit_median(project, capsys):
    store, caps = project
    q = Queue.open(store, "ann1", "annotator", "p")
    for k, seconds in enumerate((10.0, 20.0, 30.0)):
        q.save(q.task(k), "accurate", seconds=seconds)
    # An older store may hold a time no path stores any more.
    with store.transaction() as conn:
        conn.execute(update(judgements).where(judgements.c.caption_id == caps[0]).values(seconds=1e308))
        # (no whole hundredths beside the judgement, as migration 21 keeps for such a time: read from the revision)
        conn.execute(update(current_judgements).where(current_judgements.c.caption_id == caps[0])
                     .values(hundredths=working_hundredths(1e308)))
    code, out, err = run_cli(capsys, "--db", store.url, "team", "--project", "p")
    assert code == 0, err
    assert not re.search(r"\d{10}", out), out
    assert "median 25.0 s per caption" in out, out  # the impossible time is left out, as an untimed one is
