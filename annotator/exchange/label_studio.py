"""Label Studio both ways: a project's captions and judgements as Label Studio tasks, and Label Studio's export
read back into the project, every judgement under the person who made it.

The files themselves (the labeling config, task data, results, characters against words) are the codec
:mod:`annotator.io.label_studio`; this module composes what lies above it: the judgements export, the automatic
detectors' predictions, the accounts and the store.

People. Label Studio knows people by their e-mail address, and anyone may sign up there with any address. So the
export writes each annotation's ``completed_by`` with the account's own e-mail address (an account without one
gets NAME@DOMAIN with ``email_domain``, recorded on the account; without it the export is refused, naming those
accounts), and the import matches ``completed_by`` by its whole address to an account's stored one, never by the
part before "@": ``Sample-Ann@attacker.example`` is not sample-ann. An address no account has becomes a new
*annotator* account with that address (its name from the part before "@", made unique), listed in the result.
Label Studio's plain JSON export names people by their Label Studio user id: the import then needs that server's
user list (``GET /api/users/``) to read the ids as addresses. A ``ground_truth`` annotation becomes a lead's
decision (an adjudication) only when its author's address belongs to an account that is a lead or an admin here
already; otherwise it is stored as an annotation and the result says so. No import creates a lead or an admin.

Revisions. Each annotation's ``updated_at`` (else ``created_at``) is its save time; one person's annotations of
one caption are stored in time order. An annotation that says what a stored revision of that person's judgement
says (label, types, spans, note) is *unchanged*; one older than the person's newest stored revision that says
something else is refused (the store's judgement is newer). Label Studio's drafts are counted, not imported.

All or nothing, unless asked: any annotation that cannot be read or stored stops the import (nothing stored) with
the file, the task and the annotation; with ``skip_invalid`` every valid annotation is stored and each refused
one is listed with its task, annotation and reason.
"""

from __future__ import annotations

import hashlib
import pickle
import posixpath
import urllib.parse
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from ..accounts.access import LEADS
from ..errors import InputError
from ..io.importers import ImportResult, import_guard, in_batches
from ..io.label_studio import (ACCURATE, DETECTOR_MODEL, INACCURATE, Controls, LabelStudioAnnotation,
                               annotation_results, iter_tasks, place, read_annotation, read_controls, read_tasks)
from ..io.options import Example, ImportFormat, ReaderOption
from ..io.textfiles import read_json
from ..io.validate import check_name, check_same_caption
from ..io.judgement_rows import format_saved_at
from ..model import JudgementKind, Role
from ..names import check_email, email_key
from ..store import Store
from ..store.exchange import (annotated_captions_of_items, caption_index_of, items_in_chunks, judgement_annotators,
                              judgement_records, project_captions_in_chunks, references_of_items, stored_revisions)
from ..store.judgements import insert_judgement, newest_revision_times
from ..store.projects import project_id, system_id
from ..store.spool import Spool
from ..store.users import create_user, get_user_row, list_users, set_user_email, user_by_email, user_name_key
from ..spans import decode_spans
from ..taxonomy import taxonomy

#: Annotations resolved, and judgements stored, at a time by an import (memory holds a batch).
BATCH = 2000
#: Items read at a time by an export (with their references, captions and judgements).
CHUNK = 1000


# ------------------------------------------------------------------ export

def account_emails(store: Store, names, email_domain: str | None = None) -> dict[str, str]:
    """Name → e-mail address of the accounts ``names`` (the address Label Studio must know them by).

    An account without an address gets ``NAME@email_domain``, recorded on the account (so the import knows the
    person again by it). Without ``email_domain`` such accounts refuse the export, listed by name."""
    wanted = sorted(set(names), key=str.casefold)
    with store.read() as conn:
        have = {u.name: u.email for u in list_users(conn) if u.name in wanted}
    missing = [n for n in wanted if not have.get(n)]
    if missing and not email_domain:
        raise InputError(f"{len(missing)} account(s) have no e-mail address, which Label Studio knows people by: "
                         f"{', '.join(missing[:20])}{' …' if len(missing) > 20 else ''}; give each one (`annotator "
                         "users email NAME ADDRESS`) or export with --email-domain DOMAIN (NAME@DOMAIN)",
                         "--email-domain")
    if missing:
        domain = check_email(f"x@{email_domain}", "--email-domain").split("@", 1)[1]
        with store.transaction() as conn:
            for name in missing:
                have[name] = set_user_email(conn, name, _address(name, domain))
    return have


def _address(name: str, domain: str) -> str:
    try:
        return check_email(f"{name}@{domain}")
    except InputError:
        raise InputError(f"the account {name!r} cannot take the address {name}@{domain} (an address holds letters, "
                         "digits and !#$%&'*+/=?^_`{|}~- before the '@'): give it one with `annotator users email`",
                         "--email-domain") from None


def export_label_studio(store: Store, project: str, **options) -> list[dict]:
    """The whole task list of :func:`label_studio_tasks` (a small project's, for a caller that needs a list: the
    command line streams the tasks to the file instead)."""
    return list(label_studio_tasks(store, project, **options))


def label_studio_tasks(store: Store, project: str, *, system: str | None = None, layer=None,
                       image_prefix: str = "", predictions: bool = False, email_domain: str | None = None,
                       blind: bool = False) -> Iterator[dict]:
    """The Label Studio tasks of ``project`` (one task per caption; ``system``: one system's only), in the
    project's item order, read from the store a chunk of items at a time: memory holds a chunk, not the project.

    ``layer`` keeps the judgements that layer rests on (annotator.layers), else every current judgement.
    ``predictions`` adds the detectors' flags as predictions (annotator.estimate). Annotations name their
    annotator by e-mail address (:func:`account_emails`). ``blind`` writes what a second annotator must not
    start from apart: no system name in the task data, no predictions, and one task per caption and annotator
    (with that annotator's own annotation only), so nobody opens a caption already filled in by another.

    The names are checked and the accounts' addresses found (or refused) when this is called, before any task
    is read, so a refused export writes nothing.
    """
    with store.read() as conn:
        pid = project_id(conn, project)
        if system is not None:
            system_id(conn, pid, system)
        names = judgement_annotators(conn, pid, system=system)
    chosen = None
    if layer is not None:
        chosen, names = _layer_judgements(store, project, layer, system)
    emails = account_emails(store, names, email_domain)
    flagged = _detector_results(store, project, system) if predictions and not blind else {}
    return _tasks(store, pid, project, system=system, chosen=chosen, emails=emails, flagged=flagged,
                  image_prefix=image_prefix, predictions=predictions and not blind, blind=blind)


def _layer_judgements(store: Store, project: str, layer, system: str | None) -> tuple[set, list[str]]:
    """The ids of the current judgements ``layer`` rests on, and the names of their authors."""
    from ..layers import layer_judgement_ids, parse_layer
    from ..store.analysis_queries import judgement_frame
    from ..store.users import get_user
    layer = parse_layer(layer)
    if layer.kind == "annotator":
        with store.read() as conn:
            get_user(conn, layer.user)
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
    chosen = set(layer_judgement_ids(frame, layer, system=system).tolist())
    return chosen, [str(u) for u in frame["user"][frame["judgement_id"].isin(chosen)].unique()]


def _tasks(store: Store, pid: int, project: str, *, system, chosen, emails, flagged, image_prefix, predictions,
           blind) -> Iterator[dict]:
    tax = taxonomy()
    n = 0
    with store.read() as conn:
        for chunk in items_in_chunks(conn, pid, CHUNK):
            ids = [it.id for it in chunk]
            refs = references_of_items(conn, ids)
            caps = annotated_captions_of_items(conn, pid, ids, system)
            by_caption: dict[tuple[str, str], list[dict]] = {}
            for r in judgement_records(conn, pid, system=system, item_ids=ids):
                if chosen is None or r.id in chosen:
                    by_caption.setdefault((r.system, r.item), []).append(_row(r, tax))
            for it in chunk:
                text = "\n".join(f"{k}. {ref}" for k, ref in enumerate(refs.get(it.id, ()), start=1))
                for cap in caps.get(it.id, ()):
                    data = {"image": f"{image_prefix}{it.image_path}" if it.image_path else "", "caption": cap.text,
                            "references": text, "project": project, "system": cap.system, "item": it.key,
                            "line": cap.line_no}
                    rows = by_caption.get((cap.system, it.key), [])
                    for group in ([[r] for r in rows] if blind else [rows]) or [[]]:
                        task = {"id": n + 1, "data": dict(data),
                                "annotations": [_annotation(n, k, row, cap.text, emails)
                                                for k, row in enumerate(group)]}
                        if blind:  # the caption is found again by a key that does not show the system's name
                            del task["data"]["system"]
                            task["data"]["caption_key"] = blind_key(cap.system, it.key)
                        if predictions:
                            task["predictions"] = [flagged.get(cap.id) or {"model_version": DETECTOR_MODEL,
                                                                           "score": 0.0, "result": []}]
                        n += 1
                        yield task


def _row(r, tax) -> dict:
    """What an annotation needs of a judgement row (as the judgements export gives it)."""
    return {"annotator": r.annotator, "kind": r.kind, "label": r.label,
            "error_types": tax.in_order(r.error_types.split()), "spans": decode_spans(r.spans),
            "note": r.note or "", "seconds": float(r.seconds or 0.0), "saved_at": format_saved_at(r.saved_at)}


def blind_key(system: str, item: str) -> str:
    """The key a blind task names its caption by instead of its system (the import finds the caption by it)."""
    return "c-" + hashlib.sha256(f"{system}\x00{item}".encode("utf-8")).hexdigest()[:20]


def _annotation(task_index: int, k: int, row: dict, caption: str, emails: dict[str, str]) -> dict:
    name = row["annotator"]
    return {"id": task_index * 1000 + k + 1,
            "completed_by": {"email": emails[name], "first_name": name, "last_name": ""},
            "result": annotation_results(caption, row["label"], row["error_types"], row["spans"], row["note"],
                                         prefix=f"a{k + 1}"),
            "was_cancelled": row["label"] is None,
            "ground_truth": row["kind"] == JudgementKind.ADJUDICATION.value,
            "lead_time": float(row["seconds"]),
            "created_at": row["saved_at"], "updated_at": row["saved_at"]}


def _detector_results(store: Store, project: str, system: str | None) -> dict[int, dict]:
    """caption id → the detectors' prediction (flagged types and their trigger spans)."""
    from ..estimate.span_eval import detector_spans  # only with --predictions: the detectors load their lexicons
    out = {}
    for found in detector_spans(store, project, systems=None if system is None else [system]).values():
        for caption_id, text, types, spans, score in found:
            results = annotation_results(text, INACCURATE if types else ACCURATE, types, spans, "", prefix="d")
            out[caption_id] = {"model_version": DETECTOR_MODEL, "score": round(float(score), 6), "result": results}
    return out


# ------------------------------------------------------------------ import: reading

@dataclass
class LabelStudioImport(ImportResult):
    """What an import of a Label Studio export did: per annotator the judgements written, unchanged and refused;
    the accounts it created (``accounts``, and with their addresses ``accounts_created``); the ground-truth
    annotations stored as annotations; every refused annotation (``refused``: (task and annotation, reason)); the
    drafts it left out."""

    per_annotator: dict = field(default_factory=dict)
    accounts_created: list = field(default_factory=list)
    ground_truth_as_annotation: list = field(default_factory=list)
    drafts: int = 0

    def count(self, who: str, what: str) -> None:
        counts = self.per_annotator.setdefault(who, {"written": 0, "unchanged": 0, "refused": 0})
        counts[what] += 1

    def describe(self) -> str:
        """The summary the command line prints and the Data page shows."""
        n_refused = len(self.refused)
        lines = [f"label-studio import into {self.project!r}: {self.judgements} judgements written with {self.spans} "
                 f"error spans, {self.unchanged} unchanged, {n_refused} refused ({self.items_read} annotations read)"
                 + (f", {self.drafts} Label Studio drafts not imported" if self.drafts else "")]
        lines += [f"  {who}: {c['written']} written, {c['unchanged']} unchanged, {c['refused']} refused"
                  for who, c in sorted(self.per_annotator.items(), key=lambda kv: kv[0].casefold())]
        lines += [f"  new account {a['name']} <{a['email']}> (annotator, no password yet: an admin sets one on People, "
                  "or with annotator users passwd NAME)" for a in self.accounts_created]
        lines += [f"  {where}: ground truth by {who}, stored as an annotation ({who} is not a lead or an admin "
                  "here)" for where, who in self.ground_truth_as_annotation]
        lines += [f"  refused {where}: {why}" for where, why in self.refused]
        return "\n".join(lines)


@dataclass(frozen=True)
class _Read:
    """One annotation read from the file, with the caption its task names."""

    annotation: LabelStudioAnnotation
    system: str | None
    item: str | None
    line: int | None
    caption: str
    blind: str | None = None


class _Refusals:
    """Refused annotations: all of them with ``skip``, else the first stops the import (nothing stored)."""

    def __init__(self, result: LabelStudioImport, src: str, skip: bool):
        self.result, self.src, self.skip = result, src, skip

    def add(self, where: str, reason: str, who: str | None = None) -> None:
        if not self.skip:
            raise InputError(f"{reason} (with --skip-invalid the other annotations are imported and this one is "
                             "listed); nothing was imported", self.src, where)
        self.result.refused.append((where, reason))
        if who is not None:
            self.result.count(who, "refused")


def read_users_file(path: Path | str) -> dict[int, str]:
    """Label Studio user id → e-mail address, from the JSON of ``GET /api/users/`` (a list of users, each with an
    ``id`` and an ``email``)."""
    src = str(path)
    users = read_json(path)
    if isinstance(users, dict) and isinstance(users.get("results"), list):
        users = users["results"]  # a paginated answer
    if not isinstance(users, list):
        raise InputError("a Label Studio user list is the JSON list GET /api/users/ answers", src)
    out = {}
    for k, user in enumerate(users, start=1):
        if (not isinstance(user, dict) or not isinstance(user.get("id"), int) or isinstance(user.get("id"), bool)
                or not isinstance(user.get("email"), str)):
            raise InputError("each user has an integer 'id' and an 'email'", src, f"user {k}")
        out[user["id"]] = user["email"]
    return out


def _image_key(value) -> str | None:
    """The file name of a task's picture (a plain name, a URL, or Label Studio's local-files address)."""
    if not isinstance(value, str) or not value.strip():
        return None
    parts = urllib.parse.urlsplit(value.strip())
    inner = urllib.parse.parse_qs(parts.query).get("d")
    path = inner[0] if inner else urllib.parse.unquote(parts.path)
    return posixpath.basename(path) or None


def _caption_key(task: dict, system: str | None, controls: Controls, src: str, where: str) -> tuple:
    """(system, item, line) of the caption a task names; a task of a project not made here takes ``system``
    and names its item by its picture's file name."""
    data = task["data"]
    named = data.get("system")
    if isinstance(data.get("caption_key"), str) and named is None:  # a blind export's task
        return None, data.get("item"), None, data["caption_key"]
    if isinstance(named, str) and named:
        item, line = data.get("item"), data.get("line")
        if item is None and line is None:
            raise InputError("the task's data names no item (or line)", src, where)
        return named, None if item is None else str(item), line if isinstance(line, int) else None, None
    if system is None:
        raise InputError("the task's data names no system (was it exported by annotator? a Label Studio project "
                         "not made here is read with --system NAME)", src, where)
    item = data.get("item") if isinstance(data.get("item"), str) else _image_key(data.get(controls.image_field))
    if item is None:
        raise InputError(f"the task names no item: its data has neither 'item' nor a picture "
                         f"({controls.image_field!r})", src, where)
    return system, item, None, None


def _read_file(path, src, *, users, system, controls, refusals, spool: Spool) -> tuple[int, int, dict, bool]:
    """Every annotation of the file, read a task at a time (refused ones handed to ``refusals``) and put in the
    spool's bag ``reads`` in file order; (how many there were, drafts, the systems named, whether a task is a blind
    export's)."""
    tax = taxonomy()
    total = drafts = 0
    systems: dict[str, None] = {}
    blind = False
    for k, task in enumerate(iter_tasks(path, source=src), start=1):
        annotations = task.get("annotations") or []
        drafts += len(task.get("drafts") or []) if isinstance(task.get("drafts"), list) else 0
        if not isinstance(annotations, list):
            raise InputError("a task's annotations must be a list", src, place(task, k, None, 0, "task"))
        for j, entry in enumerate(annotations, start=1):
            total += 1
            where = place(task, k, entry, j)
            try:
                if not isinstance(entry, dict):
                    raise InputError("an annotation must be an object", src, where)
                drafts += len(entry.get("drafts") or []) if isinstance(entry.get("drafts"), list) else 0
                read = read_annotation(task, entry, controls, src, where, tax)
                key = _caption_key(task, system, controls, src, where)
            except InputError as e:
                refusals.add(where, e.detail, None)
                continue
            if isinstance(read.author, int):
                if users is None:
                    raise InputError(f"completed_by is Label Studio's user id {read.author} (its plain JSON export); "
                                     "give the server's user list with --label-studio-users FILE (the JSON of GET "
                                     "/api/users/) to know who that is; nothing was imported", src, where)
                if read.author not in users:
                    refusals.add(where, f"Label Studio user {read.author} is not in the user list", None)
                    continue
                read = _with_author(read, users[read.author])
            if key[0]:
                systems.setdefault(key[0], None)
            blind = blind or key[3] is not None
            spool.add("reads", None, pickle.dumps(_Read(read, *key[:3], caption=task["data"].get(controls.caption_field)
                                                        or task["data"].get("text"), blind=key[3])))
    return total, drafts, systems, blind


def _with_author(read: LabelStudioAnnotation, email: str) -> LabelStudioAnnotation:
    return replace(read, author=email)


# ------------------------------------------------------------------ import: people and storing

class _People:
    """Label Studio authors (e-mail addresses) → accounts, inside the import's transaction."""

    def __init__(self, conn, result: LabelStudioImport):
        self.conn, self.result = conn, result
        self.by_key: dict[str, tuple[int, str, str, bool]] = {}   # address key → (id, name, role, created here)

    def account(self, email: str) -> tuple[int, str, str, bool]:
        key = email_key(email)
        if key not in self.by_key:
            row = user_by_email(self.conn, email)
            if row is not None:
                self.by_key[key] = (row.id, row.name, row.role, False)
            else:
                self.by_key[key] = self._create(check_email(email))
        return self.by_key[key]

    def _create(self, email: str) -> tuple[int, str, str, bool]:
        base = check_name(email.split("@", 1)[0], "user", "completed_by")
        name, n = base, 1
        while get_user_row(self.conn, name) is not None:
            n += 1
            name = f"{base}-{n}"
        uid = create_user(self.conn, name, Role.ANNOTATOR, email=email)
        self.result.accounts_created.append({"name": name, "email": email})
        self.result.accounts.append(name)
        return uid, name, Role.ANNOTATOR.value, True


class _Captions:
    """The project's captions as a Label Studio task names them: by system and item, by system and line, or by a
    blind export's key. Looked up a batch of annotations at a time (:meth:`load`). A blind export's key is a hash
    of the caption's system and item, which no query finds: when the file holds a blind task, every caption's key
    is put in ``spool``'s bag ``blind`` first, the captions read a chunk at a time (memory holds a chunk)."""

    def __init__(self, conn, pid: int, blind: bool, spool: Spool):
        self.conn, self.pid, self.spool, self.blind = conn, pid, spool, blind
        self.by_item, self.by_line, self.by_key = {}, {}, {}
        if blind:
            spool.bag("blind", 3)
            for chunk in project_captions_in_chunks(conn, pid):
                for system, key, cid, line, text in chunk:
                    spool.add("blind", blind_key(system, key), cid, line, text)

    def load(self, reads) -> None:
        """Look up the captions a batch of annotations names (the ones it does not name are forgotten)."""
        self.by_item, self.by_line = caption_index_of(
            self.conn, self.pid, by_item={(r.system, r.item) for r in reads if not r.blind and r.item is not None},
            by_line={(r.system, r.line) for r in reads if not r.blind and r.item is None})
        if self.blind:
            self.by_key = {key: records[0][1:] for key, records in
                           self.spool.of_keys("blind", {r.blind for r in reads if r.blind}).items()}

    def find(self, r: _Read):
        if r.blind:
            return self.by_key.get(r.blind)
        return self.by_item.get((r.system, r.item)) if r.item is not None else self.by_line.get((r.system, r.line))


def _resolve(captions: _Captions, reads, people: _People, refusals: _Refusals, result) -> list[tuple]:
    """(caption id, user id, name, kind, read) of each annotation that names a caption of the project."""
    out = []
    for r in reads:
        found = captions.find(r)
        ann = r.annotation
        if found is None:
            named = f"item {r.item!r}" if r.item is not None else f"caption line {r.line}"
            refusals.add(ann.where, f"the project has no caption {r.blind!r} (a blind export's key)" if r.blind else
                         f"the project has no caption of system {r.system!r} for {named}", None)
            continue
        if r.caption is not None:
            try:
                check_same_caption(r.caption, found[2])
            except InputError as e:
                refusals.add(ann.where, e.detail, None)
                continue
        try:
            uid, name, role, created = people.account(ann.author)
        except InputError as e:
            refusals.add(ann.where, f"completed_by {str(ann.author)[:80]!r}: {e.detail}", None)
            continue
        kind = JudgementKind.ANNOTATION.value
        if ann.ground_truth:
            if not created and Role(role) in LEADS:
                kind = JudgementKind.ADJUDICATION.value
            else:
                result.ground_truth_as_annotation.append((ann.where, name))
        out.append((found[0], uid, name, kind, ann))
    return out


def _resolve_all(conn, pid: int, spool: Spool, blind: bool, people: _People, refusals: _Refusals,
                 result: LabelStudioImport) -> None:
    """Resolve the spooled annotations a batch at a time, in file order, and put each one that names a caption
    in the spool's bag ``targets`` under its caption, person and kind (its group: :func:`_store`'s unit)."""
    captions = _Captions(conn, pid, blind, spool)
    reads = (pickle.loads(row[2]) for row in spool.records("reads"))
    for batch in in_batches(reads, BATCH):
        captions.load(batch)
        for target in _resolve(captions, batch, people, refusals, result):
            spool.add("targets", f"{target[0]} {target[1]} {target[3]}", pickle.dumps(target))


def _store_all(conn, spool: Spool, refusals: _Refusals, result: LabelStudioImport) -> None:
    """Store the spooled targets whole groups at a time, the groups in the order they first came (as one
    :func:`_store` of them all would)."""
    batch: list[tuple] = []
    for _, rows in spool.groups("targets"):
        batch.extend(pickle.loads(row[1]) for row in rows)
        if len(batch) >= BATCH:
            _store(conn, batch, refusals, result)
            batch = []
    if batch:
        _store(conn, batch, refusals, result)


def _store(conn, targets: list[tuple], refusals: _Refusals, result: LabelStudioImport) -> None:
    """Store each person's annotations of each caption in time order (see the module's rules)."""
    stored = stored_revisions(conn, [t[0] for t in targets])
    newest = newest_revision_times(conn, [t[0] for t in targets])
    groups: dict[tuple, list] = {}
    for cid, uid, name, kind, ann in targets:
        groups.setdefault((cid, uid, kind), []).append((name, ann))
    tax = taxonomy()
    for (cid, uid, kind), anns in groups.items():
        seen = {(label, tax.in_order(types), spans, note)
                for label, types, note, _, spans in stored.get((cid, uid, kind), {}).values()}
        last = newest.get((cid, uid, kind))
        for name, ann in sorted(anns, key=lambda a: _utc(a[1].saved_at)):
            if ann.content in seen:
                result.count(name, "unchanged")
                result.unchanged += 1
                continue
            if last is not None and ann.saved_at is not None and _utc(ann.saved_at) < _utc(last):
                stored_at, given_at = (f"{_utc(t):%Y-%m-%d %H:%M:%S} UTC" for t in (last, ann.saved_at))
                refusals.add(ann.where, f"{name}'s judgement of this caption stored here (saved {stored_at}) is newer "
                                        f"than this annotation (saved {given_at}) and says something else", name)
                continue
            insert_judgement(conn, cid, uid, label=ann.label, error_types=ann.error_types, note=ann.note,
                             seconds=ann.seconds, kind=kind, at=ann.saved_at, spans=ann.spans)
            seen.add(ann.content)
            last = ann.saved_at or last
            result.count(name, "written")
            result.judgements += 1
            result.spans += len(ann.spans)


def _utc(at: datetime | None) -> datetime:
    if at is None:
        return datetime.now(timezone.utc)
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


@import_guard
def import_label_studio(store: Store, project: str, path: Path | str, *, source: str | None = None,
                        users_file: Path | str | None = None, skip_invalid: bool = False, system: str | None = None,
                        mapping: Path | str | None = None) -> LabelStudioImport:
    """Import the annotations of a Label Studio JSON export into ``project``'s captions (the module's rules).

    ``users_file``: the JSON of Label Studio's ``GET /api/users/``, for an export that names people by user id.
    ``skip_invalid``: store every valid annotation and list the refused ones (else the first stops the import).
    ``system`` and ``mapping`` (a file, :func:`annotator.io.label_studio.read_controls`) read a Label Studio
    project not made by annotator: its tasks' captions belong to that system, its results are named in the file.
    """
    project = check_name(project, "project", "--project")
    src = source or str(path)
    system = None if system is None else check_name(system, "system", "--system")
    result = LabelStudioImport(project, "label-studio", systems=[])
    refusals = _Refusals(result, src, skip_invalid)
    users = None if users_file is None else read_users_file(users_file)
    controls = Controls() if mapping is None else read_controls(mapping)
    with Spool() as spool:
        # The file is read a task at a time into a spool (a scratch file apart from the store), then resolved
        # and stored a batch at a time in one transaction: memory holds a batch, not the file.
        spool.bag("reads", 1)
        spool.bag("targets", 1)
        total, drafts, systems, blind = _read_file(path, src, users=users, system=system, controls=controls,
                                                   refusals=refusals, spool=spool)
        result.items_read, result.drafts = total, drafts
        if total == 0:
            raise InputError("no annotations in the file", src)
        with store.transaction() as conn:
            people = _People(conn, result)
            _resolve_all(conn, project_id(conn, project), spool, blind, people, refusals, result)
            _store_all(conn, spool, refusals, result)
    result.systems = list(systems)
    result.user = ", ".join(sorted(result.per_annotator, key=str.casefold))
    return result


def _run(store, project: str, *, command_line: bool, file, label_studio_users=None, skip_invalid=False,
         system=None, mapping=None):
    return import_label_studio(store, project, file, users_file=label_studio_users, skip_invalid=skip_invalid,
                               system=system, mapping=mapping)


def _read(path, **_):
    """Read a Label Studio export without storing it (the catalog's reader): its tasks."""
    return read_tasks(path)


FORMAT = ImportFormat(
    name="label-studio",
    help="a Label Studio JSON export (see docs/formats.md)",
    title="Label Studio JSON export (its plain or snapshot JSON)",
    options=(
        ReaderOption("file", None, "a Label Studio JSON export (a list of tasks)", metavar="FILE", kind="file",
                     required=True, label="Label Studio JSON file", types=("json",)),
        ReaderOption("label_studio_users", "--label-studio-users",
                     "the JSON of the Label Studio server's GET /api/users/: needed when the export names people by "
                     "user id (Label Studio's plain JSON export)", metavar="FILE", kind="file",
                     label="Label Studio user list (GET /api/users/, for the plain JSON export)", types=("json",)),
        ReaderOption("skip_invalid", "--skip-invalid",
                     "import every valid annotation and list the refused ones (default: the first stops the import "
                     "and nothing is stored)", kind="switch", label="Import the valid annotations, list the others"),
        ReaderOption("system", "--system", "a Label Studio project not made by annotator: the system its captions "
                     "belong to (items named by their picture's file name)", metavar="NAME",
                     label="System (a Label Studio project not made here)"),
        ReaderOption("mapping", "--mapping", "a JSON file naming the results of a project not made here: from_name "
                     "-> judgement, types, spans, fix, note or ignore; \"$caption\"/\"$image\": its data fields",
                     metavar="FILE", kind="file", label="Mapping of its results (a project not made here)",
                     types=("json",)),
    ),
    read=_read,
    run=_run,
    example=Example(files={"file": "example.json"}, into_sample=True,
                    expect={"judgements": 2, "user": "ls-annotator", "systems": ["sat-attn"]}),
)
