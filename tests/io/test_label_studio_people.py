"""Label Studio's export read back, rule by rule (files made here; tests/io/test_label_studio_server.py runs a real
server): people matched by their whole e-mail address and never impersonated, no role invented, the strict reader,
revisions in time order, spans cut as Label Studio cuts them, partial imports, drafts, user ids, a project not made
here, and the blind export."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest

from annotator.accounts import auth
from annotator.errors import InputError
from annotator.exchange.label_studio import export_label_studio, import_label_studio
from annotator.io.label_studio import labeling_config, token_span
from annotator.judgement_export import export_judgements
from annotator.model import Role
from annotator.sample import load_sample
from annotator.taxonomy import taxonomy
from tests.cli_helpers import run_cli

ANN, BEN, BOSS = "sample-ann@lab.example.org", "sample-ben@lab.example.org", "boss@lab.example.org"
CAPTION = "A man in an orange jacket smiling in front of an american flag"


def _later(minutes: float) -> str:
    """A time ``minutes`` after now (the sample's judgements are saved when a test loads it), as Label Studio
    writes times."""
    return (datetime.now(timezone.utc) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _team(store):
    """The sample (annotated by sample-ann and sample-ben, who have e-mail addresses now) and an admin."""
    load_sample(store)
    auth.set_email(store, "sample-ann", ANN)
    auth.set_email(store, "sample-ben", BEN)
    auth.add_user(store, "boss", Role.ADMIN, "a long enough password", email=BOSS)


def _annotation(aid, email, label="accurate", types=(), *, spans=(), ground_truth=False, at=None, lead_time=5.0,
                **extra):
    at = at or _later(1)
    result = [{"id": f"r{aid}", "from_name": "judgement", "to_name": "caption", "type": "choices",
               "value": {"choices": [label]}}]
    if types:
        result.append({"id": f"t{aid}", "from_name": "error_types", "to_name": "caption", "type": "choices",
                       "value": {"choices": list(types)}})
    for k, (start, end, type_id) in enumerate(spans):
        result.append({"id": f"s{aid}-{k}", "from_name": "error_span", "to_name": "caption", "type": "labels",
                       "value": {"start": start, "end": end, "labels": [type_id]}})
    completed_by = email if isinstance(email, int) else {"id": 99, "email": email, "first_name": ""}
    return {"id": aid, "completed_by": completed_by, "result": result, "was_cancelled": False,
            "ground_truth": ground_truth, "lead_time": lead_time, "created_at": at, "updated_at": at, **extra}


def _task(tid, annotations, *, caption=CAPTION, system="sat-attn", item="astronaut.jpg", **extra):
    return {"id": tid, "data": {"image": item, "caption": caption, "system": system, "item": item, "line": 0},
            "annotations": annotations, **extra}


def _write(tmp_path, tasks, name="ls.json"):
    path = tmp_path / name
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def _rows(store, history=True):
    rows = export_judgements(store, "sample", history=history).rows
    return sorted(map(tuple, rows[["item", "system", "annotator", "kind", "label", "revision"]].astype(str).values))


def _roles(store):
    return {u.name: (u.role, u.email) for u in auth.list_users(store)}


# ------------------------------------------------------------------ people

def test_an_address_that_names_an_account_only_before_the_at_is_another_person(sqlite_store, tmp_path, capsys):
    store = sqlite_store
    _team(store)
    before, roles = _rows(store), _roles(store)
    path = _write(tmp_path, [_task(1, [_annotation(1, "Sample-Ann@attacker.example", "inaccurate", ["gender"]),
                                       _annotation(2, "BOSS@evil.org", "inaccurate", ["gender"], ground_truth=True),
                                       _annotation(3, "nobody@evil.org", "accurate", ground_truth=True)])])
    code, out, err = run_cli(capsys, "--db", store.url, "import", "label-studio", "--project", "sample", str(path),
                             "--json")
    assert code == 0, err
    summary = json.loads(out)
    # nothing under sample-ann or boss: three new annotator accounts carry what the file says
    assert summary["accounts_created"] == [{"name": "Sample-Ann-2", "email": "Sample-Ann@attacker.example"},
                                           {"name": "BOSS-2", "email": "BOSS@evil.org"},
                                           {"name": "nobody", "email": "nobody@evil.org"}]
    after = _rows(store)
    new = sorted(set(after) - set(before))
    assert {r[2] for r in new} == {"Sample-Ann-2", "BOSS-2", "nobody"} and {r[3] for r in new} == {"annotation"}
    assert _roles(store) == {**roles, "Sample-Ann-2": ("annotator", "Sample-Ann@attacker.example"),
                             "BOSS-2": ("annotator", "BOSS@evil.org"), "nobody": ("annotator", "nobody@evil.org")}
    assert [who for _, who in summary["ground_truth_as_annotation"]] == ["BOSS-2", "nobody"]
    assert summary["per_annotator"]["Sample-Ann-2"] == {"written": 1, "unchanged": 0, "refused": 0}
    assert summary["accounts"] == ["Sample-Ann-2", "BOSS-2", "nobody"]


def test_an_account_without_an_address_is_not_matched_by_its_name(sqlite_store, tmp_path):
    store = sqlite_store
    load_sample(store)  # sample-ann has no address
    before = _rows(store)
    result = import_label_studio(store, "sample", _write(tmp_path, [_task(1, [_annotation(1, ANN, "inaccurate",
                                                                                               ["gender"])])]))
    assert result.accounts_created == [{"name": "sample-ann-2", "email": ANN}]
    assert [r for r in _rows(store) if r not in before] == [("astronaut.jpg", "sat-attn", "sample-ann-2",
                                                             "annotation", "inaccurate", "1")]


def test_ground_truth_is_a_decision_only_from_a_lead_or_admin_here(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    path = _write(tmp_path, [_task(1, [_annotation(1, "Boss@LAB.example.org", "inaccurate", ["gender"],
                                                   ground_truth=True),
                                       _annotation(2, ANN, "inaccurate", ["gender"], ground_truth=True)])])
    result = import_label_studio(store, "sample", path)
    assert result.accounts_created == [] and [who for _, who in result.ground_truth_as_annotation] == ["sample-ann"]
    rows = export_judgements(store, "sample").rows
    mine = rows[(rows["item"] == "astronaut.jpg") & (rows["system"] == "sat-attn")]
    assert sorted(zip(mine["annotator"], mine["kind"], mine["label"])) == [
        ("boss", "adjudication", "inaccurate"), ("sample-ann", "annotation", "inaccurate"),
        ("sample-ben", "annotation", "inaccurate")]
    assert _roles(store)["sample-ann"][0] == "annotator"


def test_user_ids_need_the_servers_user_list(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    path = _write(tmp_path, [_task(7, [_annotation(70, 2, "inaccurate", ["age"])]), _task(8, [_annotation(80, 3)])])
    with pytest.raises(InputError, match=r"task 7, annotation 70: completed_by is Label Studio's user id 2"):
        import_label_studio(store, "sample", path, skip_invalid=True)  # the whole file: nobody knows who that is
    users = _write(tmp_path, [{"id": 2, "email": "SAMPLE-ANN@lab.example.org", "first_name": ""},
                              {"id": 3, "email": BEN}], "users.json")
    result = import_label_studio(store, "sample", path, users_file=users)
    assert result.per_annotator == {"sample-ann": {"written": 1, "unchanged": 0, "refused": 0},
                                    "sample-ben": {"written": 1, "unchanged": 0, "refused": 0}}


# ------------------------------------------------------------------ the strict reader

@pytest.mark.parametrize("text, fragment", [
    ('[{"id": 1, "data": {}, "annotations": [{"completed_by": {"email": "a@b.org", "email": "boss@lab.example.org"}}]}]',
     "appears twice"),
    ('[{"id": 1, "data": {}, "annotations": [{"lead_time": NaN}]}]', "NaN"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_the_strict_reader_refuses_what_json_does_not_allow(sqlite_store, tmp_path, text, fragment):
    _team(sqlite_store)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=fragment) as err:
        import_label_studio(sqlite_store, "sample", path)
    assert str(path) in str(err.value)


def test_a_working_time_over_a_day_is_refused_naming_the_annotation(sqlite_store, tmp_path):
    _team(sqlite_store)
    path = _write(tmp_path, [_task(35, [_annotation(7, ANN, lead_time=1e308)])])
    with pytest.raises(InputError, match=r"task 35, annotation 7: lead_time must be a number of seconds from 0 to "
                                         r"86,400"):
        import_label_studio(sqlite_store, "sample", path)


def test_a_changed_caption_is_named_as_one_not_as_a_span_problem(sqlite_store, tmp_path):
    """A task whose caption text is not the project's is refused as "the caption differs from the project's", with
    both texts where they part (annotator.io.validate.check_same_caption), before any span is held against it."""
    _team(sqlite_store)
    before = _rows(sqlite_store)
    changed = CAPTION.replace("orange jacket", "orange coat")
    ann = _annotation(7, ANN, "inaccurate", ["clothing_color"], spans=[(12, 23, "clothing_color")])
    path = _write(tmp_path, [_task(35, [ann], caption=changed)])
    with pytest.raises(InputError, match=r"task 35, annotation 7: the caption differs from the project's: the file "
                                         r"has '.*orange coat.*', the project '.*orange jacket.*'"):
        import_label_studio(sqlite_store, "sample", path)
    assert _rows(sqlite_store) == before


# ------------------------------------------------------------------ revisions in time order

def test_revisions_follow_time_not_file_order(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    newer = _annotation(2, ANN, "inaccurate", ["clothing_color"], at=_later(30))
    older = _annotation(1, ANN, "inaccurate", ["age"], at=_later(10))
    result = import_label_studio(store, "sample", _write(tmp_path, [_task(1, [newer, older])]))
    assert result.judgements == 2
    rows = export_judgements(store, "sample", history=True).rows
    mine = rows[(rows["annotator"] == "sample-ann") & (rows["item"] == "astronaut.jpg") & (rows["system"] == "sat-attn")]
    assert [(r.revision, r.error_types, str(r.saved_at)[:16]) for r in mine.sort_values("revision").itertuples()][-2:] \
        == [(2, ("age",), older["updated_at"][:16]),
            (3, ("clothing_color",), newer["updated_at"][:16])]
    current = export_judgements(store, "sample").rows
    assert current[(current["annotator"] == "sample-ann") & (current["item"] == "astronaut.jpg")
                   & (current["system"] == "sat-attn")]["error_types"].tolist() == [("clothing_color",)]
    # the same file again: both are there already
    again = import_label_studio(store, "sample", _write(tmp_path, [_task(1, [newer, older])]))
    assert (again.judgements, again.unchanged) == (0, 2)
    # an older annotation that says something else does not become current over the newer one here
    stale = _annotation(3, ANN, "accurate", at=_later(20))
    with pytest.raises(InputError, match="is newer than this annotation"):
        import_label_studio(store, "sample", _write(tmp_path, [_task(1, [stale])]))


# ------------------------------------------------------------------ spans, partial imports, drafts

def test_a_word_selected_beside_punctuation_is_that_word():
    text = "A wooden desk in a studio setting. Two (red) chairs, one lamp"
    setting = text.index("setting")
    assert token_span(text, setting, setting + len("setting")) == (6, 7)  # "setting." without its full stop
    assert token_span(text, text.index("red"), text.index("red") + 3) == (8, 9)  # "(red)" without the brackets
    assert token_span(text, text.index("chairs"), text.index("one") + 3) == (9, 11)  # "chairs, one"
    for start, end in ((setting + 1, setting + 7), (setting, setting + 4), (text.index("."), text.index(".") + 1)):
        with pytest.raises(InputError):
            token_span(text, start, end)


def test_skip_invalid_imports_the_rest_and_lists_the_refused(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    before = _rows(store)
    bad = _annotation(5, ANN, "inaccurate", ["gender"], spans=[(2, 5, "clothing_color")])  # span type not ticked
    good = _annotation(6, BEN, "inaccurate", ["gender"], spans=[(2, 5, "gender")])
    draft = {"id": 1, "user": ANN, "result": [], "lead_time": 2.0}
    path = _write(tmp_path, [_task(35, [bad, good], drafts=[draft])])
    with pytest.raises(InputError, match="task 35, annotation 5"):
        import_label_studio(store, "sample", path)
    assert _rows(store) == before
    result = import_label_studio(store, "sample", path, skip_invalid=True)
    assert (result.judgements, result.spans, result.drafts, result.accounts) == (1, 1, 1, [])
    assert [where for where, _ in result.refused] == ["task 35, annotation 5"]
    assert "clothing_color" in result.refused[0][1]
    assert "refused task 35, annotation 5" in result.describe() and "1 Label Studio drafts" in result.describe()


# ------------------------------------------------------------------ a project not made here

def test_a_plain_label_studio_project_imports_with_system_and_mapping(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    mapping = _write(tmp_path, {"verdict": "judgement", "errors": "types", "comment": "note", "$caption": "text",
                                "$image": "img"}, "mapping.json")
    task = {"id": 4, "data": {"img": "/data/local-files/?d=pictures/chelsea.jpg",
                              "text": "A close up of a tabby cat with green eyes"},
            "annotations": [{"id": 40, "completed_by": {"email": BEN}, "lead_time": 3.0,
                             "created_at": _later(1), "result": [
                                 {"from_name": "verdict", "type": "choices", "value": {"choices": ["Inaccurate"]}},
                                 {"from_name": "errors", "type": "choices", "value": {"choices": ["Color"]}},
                                 {"from_name": "comment", "type": "textarea", "value": {"text": ["eyes are amber"]}}]}]}
    path = _write(tmp_path, [task])
    with pytest.raises(InputError, match="'verdict' is not part of the labeling config"):
        import_label_studio(store, "sample", path, system="sat-attn")
    with pytest.raises(InputError, match="names no system"):
        import_label_studio(store, "sample", path, mapping=mapping)
    result = import_label_studio(store, "sample", path, system="sat-attn", mapping=mapping)
    assert result.judgements == 1
    rows = export_judgements(store, "sample").rows
    mine = rows[(rows["annotator"] == "sample-ben") & (rows["item"] == "chelsea.jpg") & (rows["system"] == "sat-attn")]
    assert mine[["label", "error_types", "note"]].values.tolist() == [["inaccurate", ("color",), "eyes are amber"]]


# ------------------------------------------------------------------ the export

def test_the_export_names_people_by_address_or_refuses(sqlite_store, capsys, tmp_path):
    store = sqlite_store
    load_sample(store)
    with pytest.raises(InputError, match="sample-ann, sample-ben"):
        export_label_studio(store, "sample")
    auth.set_email(store, "sample-ann", ANN)
    tasks = export_label_studio(store, "sample", email_domain="Lab.Example.org")
    assert {a["completed_by"]["email"] for t in tasks for a in t["annotations"]} == {ANN, BEN}
    assert auth.get_email(store, "sample-ben") == BEN  # recorded: the import knows the person again by it
    auth.add_user(store, "dr who", Role.ANNOTATOR)
    with store.transaction() as conn:  # give dr who a judgement, so the export names the account
        from annotator.store.exchange import project_caption_index
        from annotator.store.judgements import insert_judgement
        from annotator.store.projects import project_id
        from annotator.store.users import user_id
        cid = next(iter(project_caption_index(conn, project_id(conn, "sample")).values()))[0]
        insert_judgement(conn, cid, user_id(conn, "dr who"), label="accurate")
    code, _, err = run_cli(capsys, "--db", store.url, "export", "label-studio", "--project", "sample", "--output",
                           str(tmp_path / "t.json"), "--email-domain", "lab.example.org")
    assert code == 2 and "'dr who' cannot take the address" in err


def test_the_blind_export_shows_no_system_no_predictions_and_no_one_elses_work(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    tasks = export_label_studio(store, "sample", blind=True)
    assert not any("system" in t["data"] or "predictions" in t for t in tasks)
    assert not any(name in json.dumps(tasks) for name in ("sat-attn", "nic-beam"))
    assert all(len(t["annotations"]) <= 1 for t in tasks)
    doubled = [t for t in tasks if t["data"]["caption"] == CAPTION and t["data"]["item"] == "astronaut.jpg"]
    assert sorted(t["annotations"][0]["completed_by"]["email"] for t in doubled) == [ANN, BEN]
    assert "$system" not in labeling_config(blind=True) and "$system" in labeling_config()
    # and the blind tasks come back to their captions
    before = _rows(store)
    for task in doubled:
        task["annotations"][0]["result"][0]["value"]["choices"] = ["accurate"]
        del task["annotations"][0]["result"][1:]
        task["annotations"][0]["updated_at"] = _later(1)
    result = import_label_studio(store, "sample", _write(tmp_path, tasks))
    assert (result.judgements, result.unchanged, result.refused) == (2, len(tasks) - 2, [])
    changed = sorted(set(_rows(store)) - set(before))
    assert [(r[0], r[1], r[2], r[4]) for r in changed] == [("astronaut.jpg", "sat-attn", "sample-ann", "accurate"),
                                                          ("astronaut.jpg", "sat-attn", "sample-ben", "accurate")]


def test_span_labels_carry_the_keys_of_their_types():
    xml = labeling_config()
    for t in taxonomy().types:
        assert f'<Label value="{t.id}"' in xml
        label = xml[xml.index(f'<Label value="{t.id}"'):]
        assert label[:label.index("/>")].endswith(f'hotkey="{t.key}"')
    assert xml.count("hotkey=") == 2 * len(taxonomy().types) + 2


def test_the_sample_round_trip_through_our_own_files_is_exact(sqlite_store, tmp_path):
    store = sqlite_store
    _team(store)
    before = _rows(store)
    tasks = export_label_studio(store, "sample")
    result = import_label_studio(store, "sample", _write(tmp_path, copy.deepcopy(tasks)))
    assert (result.judgements, result.unchanged, result.accounts_created) == (0, 32, [])
    assert _rows(store) == before
