"""AI judges in the store: each judge's signature and outputs, the answers of judge runs, and what the human
judgements record about suggestions (migrations 17-19).

Judge outputs live apart from the human judgements (tables ``judges`` and ``judge_outputs``): no human layer,
agreement figure or export of judgements reads them. :func:`replace_judge` swaps a judge's outputs for new ones
in the caller's transaction and says how many captions changed. The answers of ``annotator judge run`` are kept
one sample at a time (``judge_answers``) as they arrive, so a run that stops resumes where it was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Connection, and_, case, delete, func, select, update

from ..errors import NotFound
from .rows import upsert
from .schema import (captions, current_judgements, items, judge_answers, judge_outputs, judges, judgements,
                     sample_draws, systems, users)

#: One output row as stored: (caption id, p_inaccurate, types JSON or None, spans JSON or None, answers JSON or None).
OutputRow = tuple[int, float, str | None, str | None, str | None]


@dataclass(frozen=True)
class StoredJudge:
    """A judge of a project: its name, signature (a dict), where its outputs came from, when, and how many."""

    judge_id: int
    name: str
    signature: dict
    source: str
    updated_at: datetime
    outputs: int


def _judge_id(conn: Connection, pid: int, name: str) -> int | None:
    return conn.execute(select(judges.c.id).where(judges.c.project_id == pid, judges.c.name == name)).scalar()


def project_judges(conn: Connection, pid: int) -> list[StoredJudge]:
    """The judges of project ``pid`` by name, with how many captions each has outputs for."""
    counts = (select(judge_outputs.c.judge_id, func.count().label("n")).group_by(judge_outputs.c.judge_id)
              .subquery())
    q = (select(judges.c.id, judges.c.name, judges.c.signature, judges.c.source, judges.c.updated_at,
                func.coalesce(counts.c.n, 0))
         .select_from(judges.outerjoin(counts, counts.c.judge_id == judges.c.id))
         .where(judges.c.project_id == pid).order_by(judges.c.name))
    return [StoredJudge(r[0], r[1], json.loads(r[2]), r[3] or "", r[4], int(r[5])) for r in conn.execute(q)]


def judge_output_rows(conn: Connection, pid: int, name: str) -> tuple[StoredJudge, list[OutputRow]]:
    """A judge and its outputs (caption id order); NotFound naming the judges there are."""
    found = {j.name: j for j in project_judges(conn, pid)}
    if name not in found:
        raise NotFound(f"no judge called {name!r} in this project; judges: {', '.join(found) or 'none yet'}")
    judge = found[name]
    q = (select(judge_outputs.c.caption_id, judge_outputs.c.p_inaccurate, judge_outputs.c.types,
                judge_outputs.c.spans, judge_outputs.c.answers)
         .where(judge_outputs.c.judge_id == judge.judge_id).order_by(judge_outputs.c.caption_id))
    return judge, [(int(r[0]), float(r[1]), r[2], r[3], r[4]) for r in conn.execute(q)]


def judge_output_of(conn: Connection, pid: int, name: str, caption_id: int) -> OutputRow | None:
    """One caption's output of a judge (None when the judge or its output for that caption is missing)."""
    jid = _judge_id(conn, pid, name)
    if jid is None:
        return None
    r = conn.execute(select(judge_outputs.c.caption_id, judge_outputs.c.p_inaccurate, judge_outputs.c.types,
                            judge_outputs.c.spans, judge_outputs.c.answers)
                     .where(judge_outputs.c.judge_id == jid, judge_outputs.c.caption_id == int(caption_id))).first()
    return None if r is None else (int(r[0]), float(r[1]), r[2], r[3], r[4])


@dataclass(frozen=True)
class Replaced:
    """What :func:`replace_judge` did: outputs new, changed, removed and left as they were."""

    added: int
    changed: int
    removed: int
    unchanged: int

    @property
    def changes(self) -> int:
        """Captions whose output is new, different or gone."""
        return self.added + self.changed + self.removed


def compare_outputs(conn: Connection, pid: int, name: str, rows: list[OutputRow]) -> Replaced:
    """How :func:`replace_judge` would change the stored outputs of judge ``name`` (nothing written)."""
    jid = _judge_id(conn, pid, name)
    old: dict[int, tuple] = {}
    if jid is not None:
        q = select(judge_outputs.c.caption_id, judge_outputs.c.p_inaccurate, judge_outputs.c.types,
                   judge_outputs.c.spans, judge_outputs.c.answers).where(judge_outputs.c.judge_id == jid)
        old = {int(r[0]): (float(r[1]), r[2], r[3], r[4]) for r in conn.execute(q)}
    added = changed = unchanged = 0
    for cid, *rest in rows:
        before = old.pop(cid, None)
        if before is None:
            added += 1
        elif before == tuple(rest):
            unchanged += 1
        else:
            changed += 1
    return Replaced(added, changed, len(old), unchanged)


def replace_judge(conn: Connection, pid: int, name: str, signature: dict, source: str,
                  rows: list[OutputRow]) -> Replaced:
    """Make ``rows`` the outputs of judge ``name`` of project ``pid`` (created when new), inside the caller's
    write transaction: its earlier outputs go, its signature and source are replaced. Returns what changed."""
    writer = JudgeWriter(conn, pid, name)
    writer.write(rows)
    return writer.finish(signature, source)


class JudgeWriter:
    """:func:`replace_judge` a batch of outputs at a time, inside the caller's write transaction (an import that
    streams its file): :meth:`write` stores a batch (each caption once in the whole import: the caller checks
    that) beside the judge's earlier outputs, under a judge row of the import's own; :meth:`finish` compares the
    two sets in the database, puts the new outputs in place of the earlier ones and returns what changed. Memory
    holds a batch, not the outputs."""

    def __init__(self, conn: Connection, pid: int, name: str):
        self.conn, self.pid, self.name = conn, pid, name
        self.old = _judge_id(conn, pid, name)
        # A name no judge can have (it starts with a control character), unique to this judge: the row is gone at
        # the end of the import.
        incoming = "\x01import " + hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]
        self.jid = conn.execute(judges.insert().values(project_id=pid, name=incoming, signature="{}", source="",
                                                       updated_at=datetime.now(timezone.utc))).inserted_primary_key[0]
        self.outputs = 0

    def write(self, rows: list[OutputRow]) -> None:
        """Store a batch of outputs (no caption twice in the import)."""
        for start in range(0, len(rows), 5000):
            self.conn.execute(judge_outputs.insert(), [
                {"judge_id": self.jid, "caption_id": cid, "p_inaccurate": p, "types": t, "spans": s, "answers": a}
                for cid, p, t, s, a in rows[start:start + 5000]])
        self.outputs += len(rows)

    def finish(self, signature: dict, source: str) -> Replaced:
        """Make the outputs written the judge's (created when new), with ``signature`` and ``source``; what changed."""
        conn, now = self.conn, datetime.now(timezone.utc)
        text = json.dumps(signature, ensure_ascii=False, sort_keys=True, allow_nan=False)
        diff = Replaced(self.outputs, 0, 0, 0)
        if self.old is not None:
            new, old = judge_outputs.alias("new"), judge_outputs.alias("old")
            same = and_(*(new.c[col].is_not_distinct_from(old.c[col])
                          for col in ("p_inaccurate", "types", "spans", "answers")))
            matched, unchanged = conn.execute(
                select(func.count(), func.coalesce(func.sum(case((same, 1), else_=0)), 0))
                .select_from(new.join(old, and_(old.c.caption_id == new.c.caption_id, old.c.judge_id == self.old)))
                .where(new.c.judge_id == self.jid)).one()
            before = conn.execute(select(func.count()).select_from(judge_outputs)
                                  .where(judge_outputs.c.judge_id == self.old)).scalar()
            diff = Replaced(self.outputs - matched, matched - unchanged, before - matched, unchanged)
            conn.execute(delete(judge_outputs).where(judge_outputs.c.judge_id == self.old))
            conn.execute(update(judge_outputs).where(judge_outputs.c.judge_id == self.jid).values(judge_id=self.old))
            conn.execute(delete(judges).where(judges.c.id == self.jid))
            conn.execute(update(judges).where(judges.c.id == self.old).values(signature=text, source=source,
                                                                              updated_at=now))
        else:
            conn.execute(update(judges).where(judges.c.id == self.jid).values(name=self.name, signature=text,
                                                                              source=source, updated_at=now))
        return diff


def delete_judge(conn: Connection, pid: int, name: str) -> int:
    """Remove a judge and its outputs; returns how many outputs went (NotFound when there is no such judge)."""
    jid = _judge_id(conn, pid, name)
    if jid is None:
        raise NotFound(f"no judge called {name!r} in this project")
    n = conn.execute(select(func.count()).select_from(judge_outputs).where(judge_outputs.c.judge_id == jid)).scalar()
    conn.execute(delete(judge_outputs).where(judge_outputs.c.judge_id == jid))
    conn.execute(delete(judges).where(judges.c.id == jid))
    return int(n)


def caption_index_all(conn: Connection, pid: int) -> dict[tuple[str, str, int], tuple[int, int, str]]:
    """(system, item key, sample n) → (caption id, line, text) for every caption of a project, every sample."""
    q = (select(systems.c.name, items.c.key, captions.c.n, captions.c.id, captions.c.line_no, captions.c.text)
         .select_from(captions.join(systems, systems.c.id == captions.c.system_id)
                      .join(items, items.c.id == captions.c.item_id))
         .where(systems.c.project_id == pid))
    return {(r[0], r[1], int(r[2])): (int(r[3]), int(r[4]), r[5]) for r in conn.execute(q)}


def caption_index_at(conn: Connection, pid: int, by_item, by_line) -> tuple[dict, dict]:
    """:func:`caption_index_all` of the captions asked for only (a batch of an import at a time): (system, item
    key, n) → (caption id, line, text) for the triples of ``by_item``, and (system, n, line) → the same for the
    triples of ``by_line``."""
    joined = (captions.join(systems, systems.c.id == captions.c.system_id)
              .join(items, items.c.id == captions.c.item_id))
    cols = (systems.c.name, items.c.key, captions.c.n, captions.c.id, captions.c.line_no, captions.c.text)
    asked: dict[tuple, list] = {}  # (by item?, system, n) -> the keys or lines asked for
    for system, key, n in by_item:
        asked.setdefault((True, system, n), []).append(key)
    for system, n, line in by_line:
        asked.setdefault((False, system, n), []).append(line)
    index, at_line = {}, {}
    for (by_key, system, n), values in asked.items():
        column, values = items.c.key if by_key else captions.c.line_no, sorted(values)
        for start in range(0, len(values), 5000):
            q = select(*cols).select_from(joined).where(systems.c.project_id == pid, systems.c.name == system,
                                                        captions.c.n == n, column.in_(values[start:start + 5000]))
            for name, key, sample, cid, line, text in conn.execute(q):
                found = (int(cid), int(line), text)
                if by_key:
                    index[(name, key, int(sample))] = found
                else:
                    at_line[(name, int(sample), int(line))] = found
    return index, at_line


# ------------------------------------------------------------------ the run's answers

def cached_answers(conn: Connection, caption_ids, *, model: str, prompt_version: str,
                   settings: str) -> dict[tuple[int, int], tuple[str, str, str]]:
    """(caption id, sample) → (text hash, answer, parsed JSON) of the stored answers for these captions under one
    model, prompt version and settings."""
    out: dict = {}
    ids = sorted({int(c) for c in caption_ids})
    a = judge_answers
    for start in range(0, len(ids), 5000):
        q = select(a.c.caption_id, a.c.sample, a.c.text_hash, a.c.answer, a.c.parsed).where(
            a.c.caption_id.in_(ids[start:start + 5000]), a.c.model == model, a.c.prompt_version == prompt_version,
            a.c.settings == settings)
        for r in conn.execute(q):
            out[(int(r[0]), int(r[1]))] = (r[2], r[3], r[4])
    return out


def put_answer(conn: Connection, caption_id: int, sample: int, *, model: str, prompt_version: str, settings: str,
               text_hash: str, answer: str, parsed: str) -> None:
    """Keep one answer (replacing a stale one of the same key) inside the caller's write transaction."""
    upsert(conn, judge_answers, {"caption_id": int(caption_id), "model": model, "prompt_version": prompt_version,
                                 "settings": settings, "sample": int(sample), "text_hash": text_hash,
                                 "answer": answer, "parsed": parsed, "created_at": datetime.now(timezone.utc)},
           ["caption_id", "model", "prompt_version", "settings", "sample"])


# ------------------------------------------------------------------ suggestions and their effect

def annotation_rows(conn: Connection, pid: int) -> list[tuple]:
    """The current annotations (labelled, not skipped) of a project with what the suggestion figures need:
    (caption id, user name, label, error types (stored form), seconds, suggested (True, False or None))."""
    j = judgements
    q = (select(current_judgements.c.caption_id, users.c.name, j.c.label, j.c.error_types, j.c.seconds, j.c.suggested)
         .select_from(current_judgements.join(j, j.c.id == current_judgements.c.judgement_id)
                      .join(users, users.c.id == current_judgements.c.user_id)
                      .join(captions, captions.c.id == current_judgements.c.caption_id)
                      .join(systems, systems.c.id == captions.c.system_id))
         .where(systems.c.project_id == pid, current_judgements.c.kind == "annotation", j.c.label.is_not(None)))
    return [tuple(r) for r in conn.execute(q)]


def set_draw_predictor(conn: Connection, draw_id: int, predictor: str | None) -> None:
    """Record the judge an active draw aimed with."""
    conn.execute(update(sample_draws).where(sample_draws.c.id == int(draw_id)).values(predictor=predictor))
