"""A project goes into a real Label Studio server and comes back with every annotator, span and revision where it
was: Label Studio Community (requirements-labelstudio.txt) started once for this module on a loopback port with a
fresh data directory (tests/label_studio_server.py), driven through its REST API as a team would drive it.

Checked there: our export imports with every annotation under the right Label Studio user; annotations changed
and added through Label Studio's API come back under the right annotators from both of Label Studio's own exports
(the plain JSON with the server's user list, and the snapshot with ``completed_by`` expanded); no account is
invented and none becomes a lead or an admin; a word selected beside punctuation comes back on that word;
revisions follow time; agreement figures of untouched annotations stay as they were; the pictures show through
the local-files recipe of docs/formats.md."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from annotator.accounts import auth
from annotator.config import SAMPLE_DIR
from annotator.exchange.label_studio import export_label_studio, import_label_studio
from annotator.io.jsonl import import_jsonl
from annotator.io.judgement_rows import import_judgement_rows
from annotator.io.label_studio import labeling_config
from annotator.judgement_export import export_judgements
from annotator.model import Role
from annotator.sample import load_sample
from annotator.store import open_store
from tests.cli_helpers import run_cli
from tests.label_studio_server import label_studio_command, start_label_studio

pytestmark = [pytest.mark.serial, pytest.mark.slow]

ANN, BEN, LEA = "sample-ann@lab.example.org", "sample-ben@lab.example.org", "lea@lab.example.org"
NEWBIE = "newbie@other.example"
CAPTION = "A man in an orange jacket smiling in front of an american flag"


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    """One Label Studio server for the module, with the team's users (and a newcomer nobody here knows)."""
    if not label_studio_command().exists():
        pytest.fail(f"Label Studio is missing ({label_studio_command()}); `make test` installs it")
    server = start_label_studio(tmp_path_factory.mktemp("label-studio"))
    try:
        server.ids = {email: server.create_user(email, email.split("@")[0])["id"] for email in (ANN, BEN, LEA, NEWBIE)}
        yield server
    finally:
        server.stop()


@pytest.fixture
def team(tmp_path):
    """A SQLite store with the sample (double-annotated by sample-ann and sample-ben) plus spans, fixes, notes, a
    skip and a lead's decision by lea, and the long-caption project; every account with its address."""
    store = open_store(f"sqlite:///{tmp_path / 'team.db'}")
    load_sample(store)
    import_jsonl(store, "long-captions", SAMPLE_DIR / "long_captions.jsonl")
    import_judgement_rows(store, "long-captions", SAMPLE_DIR / "long_captions_judgements.jsonl")
    rows = [{"system": "sat-attn", "item": "astronaut.jpg", "caption": CAPTION, "annotator": "sample-ann",
             "label": "inaccurate", "error_types": ["gender", "clothing_color"], "note": "woman; suit, not jacket",
             "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"},
                       {"start": 4, "end": 6, "type": "clothing_color"}], "seconds": 12.5},
            {"system": "sat-attn", "item": "astronaut.jpg", "caption": CAPTION, "annotator": "lea",
             "kind": "adjudication", "label": "inaccurate", "error_types": ["gender"],
             "spans": [{"start": 0, "end": 2, "type": "gender"}]},
            {"system": "nic-beam", "item": "astronaut.jpg", "annotator": "sample-ben", "label": None}]
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_judgement_rows(store, "sample", extra)
    for name, email in (("sample-ann", ANN), ("sample-ben", BEN), ("lea", LEA)):
        auth.set_email(store, name, email)
    yield store
    store.dispose()


def _push(server, store, project: str, title: str):
    """Our export of ``project`` as a new Label Studio project; (its id, our task list)."""
    tasks = export_label_studio(store, project)
    created = server.create_project(title, labeling_config())
    answer = server.import_tasks(created["id"], tasks)
    assert answer["task_count"] == len(tasks) and answer["annotation_count"] == sum(len(t["annotations"]) for t in tasks)
    return created["id"], tasks


def _copy(store, tmp_path, name: str):
    """A copy of the team's store (a second import target with the same project and accounts)."""
    target = tmp_path / f"{name}.db"
    with sqlite3.connect(store.url.removeprefix("sqlite:///")) as source, sqlite3.connect(target) as copy:
        source.backup(copy)  # the pages in the write-ahead log too
    return open_store(f"sqlite:///{target}")


def _import(tmp_path, store, project: str, tasks, name: str, **kw):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return import_label_studio(store, project, path, **kw)


def _accounts(store):
    return {u.name: (u.role, u.email) for u in auth.list_users(store)}


def _current(store, project):
    rows = export_judgements(store, project).rows
    return {(r.system, r.item, r.annotator, r.kind): (r.label, r.error_types, r.spans, r.note)
            for r in rows.itertuples()}


def _agreement(store, capsys, *args):
    code, out, err = run_cli(capsys, "--db", store.url, "agreement", "--project", "sample", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_project_goes_through_label_studio_and_back_unchanged(label_studio, team, tmp_path, capsys):
    ls_project, tasks = _push(label_studio, team, "sample", "round trip")
    # every annotation is under the Label Studio user with the account's address
    by_id = {u["id"]: u["email"] for u in label_studio.users()}
    plain = label_studio.tasks(ls_project)
    ours = {(t["data"]["system"], t["data"]["item"]): sorted(a["completed_by"]["email"] for a in t["annotations"])
            for t in tasks}
    theirs = {(t["data"]["system"], t["data"]["item"]): sorted(by_id[a["completed_by"]] for a in t["annotations"])
              for t in plain}
    assert theirs == ours and sum(map(len, theirs.values())) == 33
    assert {by_id[a["completed_by"]] for t in plain for a in t["annotations"] if a["ground_truth"]} == {LEA}
    # Label Studio's own exports come back unchanged: nobody invented, no role moved, the same agreement
    accounts, current = _accounts(team), _current(team, "sample")
    figures = {flags: _agreement(team, capsys, *flags) for flags in ((), ("--spans",))}
    users = tmp_path / "users.json"
    users.write_text(json.dumps(label_studio.users()), encoding="utf-8")
    for name, export, kw in (("plain", plain, {"users_file": users}),
                             ("snapshot", label_studio.snapshot_export(ls_project), {})):
        copy = _copy(team, tmp_path, name)
        result = _import(tmp_path, copy, "sample", export, name, **kw)
        assert (result.judgements, result.unchanged, result.refused, result.accounts_created) == (0, 33, [], []), name
        assert result.ground_truth_as_annotation == []
        assert _accounts(copy) == accounts and _current(copy, "sample") == current
        assert {flags: _agreement(copy, capsys, *flags) for flags in figures} == figures
        copy.dispose()


def _result(server, annotation_id: int) -> list[dict]:
    return server.get(f"/api/annotations/{annotation_id}/")["result"]


def _annotation_of(plain, system, item, email, by_id):
    task = next(t for t in plain if (t["data"]["system"], t["data"]["item"]) == (system, item))
    return task["id"], next(a for a in task["annotations"] if by_id[a["completed_by"]] == email)


def test_edits_in_label_studio_come_back_under_their_annotators(label_studio, team, tmp_path):
    ls = label_studio
    ls_sample, _ = _push(ls, team, "sample", "edits")
    ls_long, _ = _push(ls, team, "long-captions", "long captions")
    by_id = {u["id"]: u["email"] for u in ls.users()}
    plain = ls.tasks(ls_sample)
    # a relabel: sample-ann finds the rocket caption accurate after all
    _, ann = _annotation_of(plain, "sat-attn", "rocket.jpg", ANN, by_id)
    ls.patch(f"/api/annotations/{ann['id']}/", {"result": [
        {"id": "e1", "from_name": "judgement", "to_name": "caption", "type": "choices",
         "value": {"choices": ["accurate"]}}]})
    # a type deleted: sample-ben keeps gender only on the astronaut caption (and its span)
    _, ben = _annotation_of(plain, "sat-attn", "astronaut.jpg", BEN, by_id)
    kept = [r for r in ben["result"] if r["from_name"] != "error_types" and "clothing_color" not in
            json.dumps(r.get("value", {}).get("labels", []))]
    kept.append({"id": "e2", "from_name": "error_types", "to_name": "caption", "type": "choices",
                 "value": {"choices": ["gender"]}})
    ls.patch(f"/api/annotations/{ben['id']}/", {"result": kept})
    before_ben = _current(team, "sample")[("sat-attn", "astronaut.jpg", "sample-ben", "annotation")]
    # a newcomer's two annotations of the chelsea caption: the first one is edited last
    chelsea, _ = _annotation_of(plain, "sat-attn", "chelsea.jpg", ANN, by_id)
    judgement = {"id": "n", "from_name": "judgement", "to_name": "caption", "type": "choices"}
    first = ls.post(f"/api/tasks/{chelsea}/annotations/", {"result": [{**judgement, "value": {"choices": ["accurate"]}}],
                                                           "completed_by": ls.ids[NEWBIE], "lead_time": 4.0})
    ls.post(f"/api/tasks/{chelsea}/annotations/", {"result": [{**judgement, "value": {"choices": ["accurate"]}}],
                                                   "completed_by": ls.ids[NEWBIE], "lead_time": 2.0})
    ls.patch(f"/api/annotations/{first['id']}/", {"result": [
        {**judgement, "value": {"choices": ["inaccurate"]}},
        {"id": "n2", "from_name": "error_types", "to_name": "caption", "type": "choices",
         "value": {"choices": ["color"]}}]})
    # a new span with a fix, over "setting" of "…studio setting." as Label Studio's word selection stores it
    long_plain = ls.tasks(ls_long)
    _, sam = _annotation_of(long_plain, "vlm-para", "astronaut.jpg", ANN, by_id)
    text = next(t for t in long_plain if t["data"]["item"] == "astronaut.jpg")["data"]["caption"]
    start = text.index("studio setting.") + len("studio ")
    assert (start, start + 7) == (84, 91)
    region = {"start": start, "end": start + 7, "text": "setting"}
    types = next(r for r in sam["result"] if r["from_name"] == "error_types")
    types["value"]["choices"] = sorted(set(types["value"]["choices"]) | {"scene"})
    ls.patch(f"/api/annotations/{sam['id']}/", {"result": sam["result"] + [
        {"id": "w1", "from_name": "error_span", "to_name": "caption", "type": "labels",
         "value": {**region, "labels": ["scene"]}},
        {"id": "w1", "from_name": "fix", "to_name": "caption", "type": "textarea",
         "value": {**region, "text": ["spacecraft cabin"]}}]})

    users = tmp_path / "users.json"
    users.write_text(json.dumps(ls.users()), encoding="utf-8")
    accounts = _accounts(team)
    flavours = {"plain": (ls.tasks(ls_sample), ls.tasks(ls_long), {"users_file": users}),
                "snapshot": (ls.snapshot_export(ls_sample), ls.snapshot_export(ls_long), {})}
    for name, (sample_export, long_export, kw) in flavours.items():
        copy = _copy(team, tmp_path, name)
        result = _import(tmp_path, copy, "sample", sample_export, f"{name}-sample", **kw)
        assert result.per_annotator["sample-ann"] == {"written": 1, "unchanged": 15, "refused": 0}, name
        assert result.per_annotator["sample-ben"] == {"written": 1, "unchanged": 15, "refused": 0}, name
        assert result.per_annotator["newbie"] == {"written": 2, "unchanged": 0, "refused": 0}, name
        assert result.accounts_created == [{"name": "newbie", "email": NEWBIE}] and result.refused == []
        # nobody invented but the newcomer, an annotator; no role moved
        assert _accounts(copy) == {**accounts, "newbie": ("annotator", NEWBIE)}
        now = _current(copy, "sample")
        assert now[("sat-attn", "rocket.jpg", "sample-ann", "annotation")][:2] == ("accurate", ())
        assert now[("sat-attn", "astronaut.jpg", "sample-ben", "annotation")][1] == ("gender",) != before_ben[1]
        assert now[("sat-attn", "astronaut.jpg", "lea", "adjudication")][0] == "inaccurate"
        # the newcomer's revisions follow Label Studio's times: the annotation edited last is current
        assert now[("sat-attn", "chelsea.jpg", "newbie", "annotation")][:2] == ("inaccurate", ("color",))
        history = export_judgements(copy, "sample", history=True).rows
        newbie = history[history["annotator"] == "newbie"].sort_values("revision")
        assert newbie["saved_at"].is_monotonic_increasing and newbie["label"].tolist() == ["accurate", "inaccurate"]
        # the untouched judgements are as they were
        untouched = {k: v for k, v in _current(team, "sample").items()
                     if k[1:3] not in {("rocket.jpg", "sample-ann"), ("astronaut.jpg", "sample-ben")}}
        assert {k: now[k] for k in untouched} == untouched
        long = _import(tmp_path, copy, "long-captions", long_export, f"{name}-long", **kw)
        assert long.per_annotator["sample-ann"]["written"] == 1 and long.refused == []
        spans = _current(copy, "long-captions")[("vlm-para", "astronaut.jpg", "sample-ann", "annotation")][2]
        words = text.split()
        assert [(words[s.start:s.end], s.fix) for s in spans if s.type == "scene"] == [(["setting."], "spacecraft cabin")]
        copy.dispose()


def test_pictures_show_through_the_local_files_recipe(label_studio, team):
    ls = label_studio
    pictures = ls.files_root / "sample"
    shutil.copytree(SAMPLE_DIR / "images", pictures)
    tasks = export_label_studio(team, "sample", image_prefix="/data/local-files/?d=sample/")
    project = ls.create_project("pictures", labeling_config())
    ls.import_tasks(project["id"], tasks)
    ls.post("/api/storages/localfiles/", {"project": project["id"], "path": str(pictures), "title": "pictures",
                                          "use_blob_urls": False})
    shown = ls.tasks(project["id"])[0]["data"]["image"]
    assert shown == "/data/local-files/?d=sample/astronaut.jpg"
    assert ls.get(shown, raw=True) == (SAMPLE_DIR / "images" / "astronaut.jpg").read_bytes()


def test_label_studio_refuses_our_tasks_without_its_users_and_says_whom(label_studio, team):
    """What the import of tasks needs in Label Studio: its users made first (the docs' first step)."""
    from tests.label_studio_server import LabelStudioError
    auth.add_user(team, "stranger", Role.ANNOTATOR, email="stranger@lab.example.org")
    with team.transaction() as conn:
        from annotator.store.exchange import project_caption_index
        from annotator.store.judgements import insert_judgement
        from annotator.store.projects import project_id
        from annotator.store.users import user_id
        cid = next(iter(project_caption_index(conn, project_id(conn, "sample")).values()))[0]
        insert_judgement(conn, cid, user_id(conn, "stranger"), label="accurate",
                         at=datetime.now(timezone.utc) - timedelta(seconds=1))
    project = label_studio.create_project("no such user", labeling_config())
    with pytest.raises(LabelStudioError, match="stranger@lab.example.org"):
        label_studio.import_tasks(project["id"], export_label_studio(team, "sample"))


def test_a_label_studio_project_not_made_here_comes_in_with_system_and_mapping(label_studio, team, tmp_path):
    """A plain Label Studio captioning project (its own image, text, choices and labels) read with --system and a
    mapping file."""
    ls = label_studio
    config = """<View>
  <Image name="picture" value="$img"/>
  <Text name="text" value="$text" granularity="word"/>
  <Labels name="words" toName="text"><Label value="Color"/><Label value="Number"/></Labels>
  <Choices name="verdict" toName="text"><Choice value="Accurate"/><Choice value="Inaccurate"/></Choices>
  <Choices name="errors" toName="text" choice="multiple"><Choice value="Color"/><Choice value="Number"/></Choices>
  <TextArea name="comment" toName="text"/>
</View>"""
    caption = "A close up of a tabby cat with green eyes"
    project = ls.create_project("their own", config)
    ls.import_tasks(project["id"], [{"img": "/data/local-files/?d=pictures/chelsea.jpg", "text": caption}])
    task = ls.tasks(project["id"])[0]
    green = caption.index("green")
    ls.post(f"/api/tasks/{task['id']}/annotations/", {"completed_by": ls.ids[BEN], "lead_time": 9.5, "result": [
        {"id": "v", "from_name": "verdict", "to_name": "text", "type": "choices", "value": {"choices": ["Inaccurate"]}},
        {"id": "e", "from_name": "errors", "to_name": "text", "type": "choices", "value": {"choices": ["Color"]}},
        {"id": "w", "from_name": "words", "to_name": "text", "type": "labels",
         "value": {"start": green, "end": green + 5, "text": "green", "labels": ["Color"]}},
        {"id": "c", "from_name": "comment", "to_name": "text", "type": "textarea", "value": {"text": ["amber eyes"]}}]})
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"verdict": "judgement", "errors": "types", "words": "spans", "comment": "note",
                                   "$caption": "text", "$image": "img"}), encoding="utf-8")
    snapshot = ls.snapshot_export(project["id"])
    result = _import(tmp_path, team, "sample", snapshot, "theirs", system="sat-attn", mapping=mapping)
    assert result.per_annotator == {"sample-ben": {"written": 1, "unchanged": 0, "refused": 0}}
    label, types, spans, note = _current(team, "sample")[("sat-attn", "chelsea.jpg", "sample-ben", "annotation")]
    assert (label, types, note) == ("inaccurate", ("color",), "amber eyes")
    assert [(caption.split()[s.start:s.end], s.type) for s in spans] == [(["green"], "color")]
