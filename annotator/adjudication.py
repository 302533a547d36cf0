"""Adjudication: resolving disagreements between annotators.

The judgement layers (one annotator, adjudicated, consensus) and their rules
live in annotator.layers; an adjudication is what makes a caption's status
"adjudicated" there.

The adjudication queue (:func:`adjudication_queue`) lists the captions whose
annotators disagree — on the label, or (all inaccurate) on the error types —
plus, for review, those already adjudicated.

Saving (:func:`adjudicate`) stores a judgement of kind "adjudication" under
the lead's name through annotator.store.judgements.save_judgement, with the
same rules an annotation follows (a label; *inaccurate* needs a type;
*accurate* has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .accounts.access import LEADS, require_role
from .errors import InputError
from .layers import ADJUDICATION, ANNOTATION, factorize_sorted, masks_to_ids, newest_per_caption, recode, select_rows
from .model import Box, Judgement, JudgementKind, Label, Role
from .taxonomy import taxonomy

__all__ = ["adjudication_queue", "filter_queue", "QUEUE_DISAGREEMENTS", "QUEUE_STATUSES", "adjudicate", "CaptionCase",
           "caption_case", "Decision", "suggested_decision", "who_said_what", "type_voters", "types_pending"]


# ------------------------------------------------------------------ queue

def adjudication_queue(frame: pd.DataFrame, *, annotators=None, system: str | None = None,
                       include_types: bool = True, include_done: bool = True, type_ids=None) -> pd.DataFrame:
    """Captions that need (or had) a lead's decision, one row each, by caption id.

    A caption is in the queue when two or more of ``annotators`` (default: all)
    judged it and their labels differ ("label"), or, with ``include_types``, all
    said inaccurate with different types ("types"). Captions with an
    adjudication are kept when ``include_done`` (column ``adjudicated``).
    A types disagreement where an annotator said inaccurate without error types
    yet (the staged second pass: the types are still to come) is listed last,
    with those annotators in ``waiting_for``; :func:`adjudicate` refuses it
    until they are in.
    Columns: caption_id, item_id, system, is_practice, disagreement, annotators
    (how many judged), inaccurate (how many said so), label_<user>/types_<user>
    per annotator (missing when that annotator did not judge it), waiting_for
    (names, "" when nobody's types are pending), adjudicated,
    adjudicated_label, adjudicated_types, adjudicated_by (missing when not adjudicated).
    Text columns are categoricals.
    """
    type_ids = tuple(type_ids or taxonomy().ids)
    ann = select_rows(frame, ANNOTATION, system=system, type_ids=type_ids)
    if annotators is None:
        annotators = sorted(str(u) for u in pd.unique(np.asarray(ann.user, dtype=object)))
    annotators = tuple(annotators)
    codes = recode(ann.user, annotators)
    ann = ann.take(codes >= 0)
    codes = codes[codes >= 0]
    uniq, row = factorize_sorted(ann.caption_id)
    n, k = len(uniq), len(annotators)
    present = np.zeros((n, k), bool)
    inacc = np.zeros((n, k), bool)
    masks = np.zeros((n, k), np.int64)
    present[row, codes] = True
    inacc[row, codes] = ann.inaccurate
    masks[row, codes] = ann.types
    m = present.sum(axis=1)
    ones = inacc.sum(axis=1)
    label_diff = (m >= 2) & (ones > 0) & (ones < m)
    big = np.int64(1) << np.int64(62)
    mn = np.where(present, masks, big).min(axis=1)
    mx = np.where(present, masks, -1).max(axis=1)
    type_diff = (m >= 2) & (ones == m) & (mn != mx) if include_types else np.zeros(n, bool)
    # Inaccurate without error types, where every annotator said inaccurate: the types are still to come (the
    # staged second pass), so the captions wait, listed last, and no decision is taken on them yet.
    untyped = present & inacc & (masks == 0) & type_diff[:, None]
    sel = np.flatnonzero(label_diff | type_diff)
    sel = sel[np.argsort(untyped[sel].any(axis=1), kind="stable")]

    # Newest adjudication per caption, sorted by caption id, to look the queue's captions up in.
    adj = select_rows(frame, ADJUDICATION, system=system, type_ids=type_ids)
    newest = adj.take(newest_per_caption(adj)) if len(adj) else adj
    a_cap = newest.caption_id
    if len(a_cap):
        pos = np.minimum(np.searchsorted(a_cap, uniq[sel]), len(a_cap) - 1)
        done = a_cap[pos] == uniq[sel]
    else:
        pos, done = np.zeros(len(sel), np.int64), np.zeros(len(sel), bool)
    if not include_done:
        sel, done, pos = sel[~done], done[~done], pos[~done]

    first_idx = np.zeros(n, np.int64)
    first_idx[row[::-1]] = np.arange(len(row))[::-1]
    src = first_idx[sel]
    labels = [Label.ACCURATE.value, Label.INACCURATE.value]

    def _type_names(ms: np.ndarray, missing: np.ndarray) -> pd.Categorical:
        uniq_m, inv = np.unique(ms, return_inverse=True)
        cats = [" ".join(masks_to_ids(v, type_ids)) for v in uniq_m.tolist()]
        return pd.Categorical.from_codes(np.where(missing, -1, inv), categories=pd.Index(cats, dtype=object))

    out = pd.DataFrame({
        "caption_id": uniq[sel],
        "item_id": ann.item_id[src],
        "system": ann.system[src],
        "is_practice": ann.is_practice[src],
        "disagreement": pd.Categorical.from_codes(np.where(label_diff[sel], 0, 1).astype(np.int8),
                                                  categories=["label", "types"]),
        "annotators": m[sel], "inaccurate": ones[sel],
    })
    for j, a in enumerate(annotators):
        p = present[sel, j]
        out[f"label_{a}"] = pd.Categorical.from_codes(np.where(p, inacc[sel, j], -1).astype(np.int8), categories=labels)
        out[f"types_{a}"] = _type_names(masks[sel, j], ~p)
    names = np.asarray(annotators, dtype=object)
    out["waiting_for"] = pd.Categorical([", ".join(names[untyped[i]]) for i in sel])
    out["adjudicated"] = done
    if len(a_cap):
        out["adjudicated_label"] = pd.Categorical.from_codes(np.where(done, newest.inaccurate[pos], -1).astype(np.int8),
                                                             categories=labels)
        out["adjudicated_types"] = _type_names(np.where(done, newest.types[pos], 0), ~done)
        out["adjudicated_by"] = pd.Categorical(np.where(done, np.asarray(newest.user, dtype=object)[pos], None))
    else:
        for col in ("adjudicated_label", "adjudicated_types", "adjudicated_by"):
            out[col] = pd.Categorical([None] * len(sel), categories=pd.Index([], dtype=object))
    return out


#: Queue filters: which disagreements (any, label, types) and which status (undecided, decided, all).
QUEUE_DISAGREEMENTS = {"any": "Every disagreement", "label": "Label disagreements", "types": "Type disagreements"}
QUEUE_STATUSES = {"undecided": "Undecided", "decided": "Decided", "all": "Decided or not"}


def filter_queue(queue: pd.DataFrame, *, disagreement: str = "any", status: str = "all") -> pd.DataFrame:
    """The rows of an :func:`adjudication_queue` with that ``disagreement`` ("any", "label", "types")
    and ``status`` ("undecided": no adjudication yet, "decided", "all"), in queue order."""
    if disagreement not in QUEUE_DISAGREEMENTS:
        raise InputError(f"unknown disagreement filter {disagreement!r} (use one of {', '.join(QUEUE_DISAGREEMENTS)})")
    if status not in QUEUE_STATUSES:
        raise InputError(f"unknown status filter {status!r} (use one of {', '.join(QUEUE_STATUSES)})")
    keep = np.ones(len(queue), bool)
    if disagreement != "any":
        keep &= np.asarray(queue["disagreement"] == disagreement, bool)
    if status != "all":
        done = np.asarray(queue["adjudicated"], bool)
        keep &= done if status == "decided" else ~done
    return queue[keep].reset_index(drop=True)


# ------------------------------------------------------------------ saving and viewing

#: :func:`adjudicate` without ``base``: no check of what was decided before.
UNCHECKED = object()


def adjudicate(store, caption_id: int, lead: str, lead_role: Role | str, label: Label | str, error_types=(), *,
               note: str = "", seconds: float = 0.0, create_user: bool = False, stamp=None, base=UNCHECKED,
               spans=()) -> int:
    """Store a lead's final judgement of a caption (kind "adjudication"); return its revision.

    Only leads and admins may adjudicate (PermissionDenied otherwise). The
    judgement follows the annotation rules: a label is required, *inaccurate*
    needs at least one error type, *accurate* has none, "Other" needs a note.
    ``create_user`` creates the lead's account row if missing (local mode). ``stamp`` (the
    :attr:`CaptionCase.stamp` of the caption the lead decided on) refuses the save with CaptionChanged,
    storing nothing, when the id holds another caption by now (a restore or a new import). ``base`` (a page
    passes the :attr:`CaptionCase.adjudication` it showed, None when there was none) refuses the save with
    JudgementChanged, storing nothing, when another decision (another lead's, or one from another tab) counts
    by now; without it (the command line) the decision is stored whatever was decided before. ``spans``: where
    in the caption the decided error types are (annotator.spans; the same rules as an annotation's).
    """
    from .spans import check_spans
    from .store.correction_queries import caption_text
    from .store.judgements import require_caption, save_judgement
    from .store.stamps import check_caption_stamp
    from .store.users import user_id
    require_role(lead_role, LEADS, "adjudication")
    types = _validate(label, error_types, note)
    from .store.caption_queries import caption_judgements
    waiting = types_pending([j for j in caption_judgements(store, int(caption_id))
                             if j.kind is JudgementKind.ANNOTATION])
    if waiting:
        raise InputError(f"this caption is waiting for {' and '.join(waiting)}'s error types (second pass); "
                         "decide once they are in")
    with store.transaction() as conn:
        if stamp is None:
            require_caption(conn, int(caption_id))
        else:  # the caption decided on must still be there: CaptionChanged names what took its id
            check_caption_stamp(conn, stamp, int(caption_id))
        uid = user_id(conn, lead, create_role=Role(lead_role) if create_user else None)
        spans = check_spans(spans, label=label, error_types=types, caption=caption_text(conn, int(caption_id))) \
            if spans else ()
    check = None
    if base is not UNCHECKED:
        from .store.judgements import check_adjudication_base

        def check(conn):
            check_adjudication_base(conn, int(caption_id), base)
    return save_judgement(store, int(caption_id), uid, label=Label(label), error_types=types, note=note or "",
                          seconds=float(seconds or 0.0), kind=JudgementKind.ADJUDICATION, stamp=stamp, check=check,
                          spans=spans)


def _validate(label, error_types, note) -> tuple[str, ...]:
    try:
        from .annotation import validate
    except ImportError:  # pragma: no cover - the annotation module ships with the app
        validate = None
    if validate is not None:
        return validate(label, error_types, note=note)
    if label in (None, ""):
        raise InputError("choose Accurate or Inaccurate first")
    label = Label(label)
    types = taxonomy().validate_ids(error_types or ())
    if label is Label.ACCURATE and types:
        raise InputError("an accurate caption has no error types")
    if label is Label.INACCURATE and not types:
        raise InputError("an inaccurate caption needs at least one error type")
    return types


@dataclass(frozen=True)
class CaptionCase:
    """Everything the adjudication screen shows for one caption."""

    caption_id: int
    item_id: int
    item_key: str
    system: str
    line_no: int
    text: str
    image_root: str | None
    image_path: str | None
    width: int | None
    height: int | None
    is_practice: bool
    boxes: tuple[Box, ...]
    annotations: tuple[Judgement, ...]   # current annotation of every annotator
    adjudications: tuple[Judgement, ...] = field(default=())  # current adjudication of every lead
    trusted_image_root: str | None = None  # the root as a command-line import set it (images.check_image_root)
    project: str = ""

    @property
    def stamp(self):
        """The caption as shown here (annotator.store.stamps.CaptionStamp), for :func:`adjudicate`."""
        from .store.stamps import CaptionStamp
        return CaptionStamp.of(self.caption_id, self.project, self.system, self.item_key, self.line_no, self.text)

    @property
    def adjudication(self) -> Judgement | None:
        """The adjudication that counts (the newest), or None."""
        if not self.adjudications:
            return None
        return max(self.adjudications, key=lambda j: j.judgement_id or 0)

    def image_png(self, *, max_side: int = 1024) -> tuple[bytes, str | None]:
        """The item's image with its gold boxes as PNG, and a message when the photo cannot be
        used (no root, root or path refused): then the boxes are drawn on a neutral canvas."""
        from .images import render_boxes_png
        size = {"width": self.width, "height": self.height, "max_side": max_side}
        try:
            return render_boxes_png(self.image_root, self.image_path, self.boxes, trusted_root=self.trusted_image_root,
                                    **size), None
        except InputError as exc:
            return render_boxes_png(None, None, self.boxes, **size), str(exc)

    def image_file(self) -> Path | None:
        """The image's path under the root (the root checked to be allowed, the path not to leave it), or None."""
        if not self.image_path or not self.image_root:
            return None
        from .images import check_image_root, resolve_image_path
        check_image_root(self.image_root, trusted=self.trusted_image_root)
        return resolve_image_path(self.image_root, self.image_path)


def caption_case(store, project: str, caption_id: int) -> CaptionCase:
    """Load one caption with its item, boxes, annotations and adjudications (NotFound if absent)."""
    from .errors import NotFound
    from .store.caption_queries import caption_details, caption_judgements, image_root, item_boxes
    from .store.projects import project_id, trusted_image_root
    details = caption_details(store, project, [caption_id])
    if details.empty:
        raise NotFound(f"project {project!r} has no caption with id {caption_id}")
    d = details.iloc[0]
    judgements = caption_judgements(store, int(caption_id))
    with store.read() as conn:
        trusted = trusted_image_root(conn, project_id(conn, project))
    return CaptionCase(
        caption_id=int(d.caption_id), item_id=int(d.item_id), item_key=str(d.item_key), system=str(d.system),
        line_no=int(d.line_no), text=str(d.text), image_root=image_root(store, project),
        image_path=None if pd.isna(d.image_path) else str(d.image_path),
        width=None if pd.isna(d.width) else int(d.width), height=None if pd.isna(d.height) else int(d.height),
        is_practice=bool(d.is_practice), boxes=tuple(item_boxes(store, int(d.item_id))),
        annotations=tuple(j for j in judgements if j.kind is JudgementKind.ANNOTATION),
        adjudications=tuple(j for j in judgements if j.kind is JudgementKind.ADJUDICATION), trusted_image_root=trusted,
        project=project)


# ------------------------------------------------------------------ the lead's starting point

@dataclass(frozen=True)
class Decision:
    """What the decision form starts from: the adjudication so far, else the annotators' judgements merged."""

    label: Label | None
    error_types: tuple[str, ...]
    note: str = ""
    decided: bool = False  # True when this is an adjudication already stored
    spans: tuple = ()      # annotator.spans.Span: the adjudication's, else the annotators' joined per type


def _judged(case: CaptionCase, annotators=None) -> list[Judgement]:
    chosen = None if annotators is None else set(annotators)
    return [j for j in case.annotations if chosen is None or j.user in chosen]


def suggested_decision(case: CaptionCase, annotators=None) -> Decision:
    """The decision the form is pre-filled with.

    A caption adjudicated before starts from that adjudication. Otherwise the
    error types are the union of the types ``annotators`` (default: all)
    ticked, in taxonomy order, so a lead who decides *inaccurate* keeps or
    drops types rather than ticking them again; the label is the annotators'
    label when every one who gave a label gave the same, else left open. The spans are the union of the
    annotators' spans, those of one type that overlap joined into one (annotator.spans.merge_spans), so the
    lead keeps or drops them.
    """
    from .spans import merge_spans
    current = case.adjudication
    if current is not None:
        return Decision(current.label, tuple(current.error_types), current.note or "", True, tuple(current.spans))
    judged = _judged(case, annotators)
    tax = taxonomy()
    ticked = {t for j in judged for t in j.error_types}
    labels = {j.label for j in judged if j.label is not None}
    label = labels.pop() if len(labels) == 1 else None
    return Decision(label, tuple(t for t in tax.ids if t in ticked),
                    spans=merge_spans([s for j in judged for s in j.spans]))


def span_voters(case: CaptionCase, annotators=None) -> list[tuple]:
    """Every span the annotators marked, once: (span, the annotators who marked exactly it), in caption order.
    Spans with the same words and type but another fix are listed apart."""
    out: dict = {}
    for j in _judged(case, annotators):
        for s in j.spans:
            out.setdefault(s, []).append(j.user)
    return [(s, tuple(users)) for s, users in sorted(out.items())]


def types_pending(annotations, annotators=None) -> tuple[str, ...]:
    """The annotators whose error types a caption still waits for: every labelled judgement of ``annotations``
    (current annotations; of ``annotators`` when given) says inaccurate, two or more of them, and these
    said so without types yet (the staged second pass). Empty when nothing is pending."""
    chosen = None if annotators is None else set(annotators)
    judged = [j for j in annotations if j.label is not None and (chosen is None or j.user in chosen)]
    if len(judged) < 2 or any(j.label is not Label.INACCURATE for j in judged):
        return ()
    return tuple(j.user for j in judged if not j.error_types)


def type_voters(case: CaptionCase, annotators=None) -> dict[str, tuple[str, ...]]:
    """Error type id → the annotators who ticked it (in the order of ``case.annotations``)."""
    out: dict[str, list[str]] = {}
    for j in _judged(case, annotators):
        for t in j.error_types:
            out.setdefault(t, []).append(j.user)
    return {t: tuple(users) for t, users in out.items()}


def who_said_what(case: CaptionCase, annotators=None) -> pd.DataFrame:
    """One row per annotator of the caption: annotator, label ("skipped" for a skip), error types (names,
    in taxonomy order), note, seconds, revision. Annotators in ``annotators`` order when given."""
    tax = taxonomy()
    judged = _judged(case, annotators)
    if annotators is not None:
        order = {a: i for i, a in enumerate(annotators)}
        judged.sort(key=lambda j: order.get(j.user, len(order)))
    rows = [{"annotator": j.user, "label": j.label.value if j.label is not None else "skipped",
             "error types": ", ".join(tax.get(t).name for t in tax.ids if t in set(j.error_types)),
             "note": j.note or "", "seconds": round(float(j.seconds or 0.0), 1), "revision": int(j.revision)}
            for j in judged]
    return pd.DataFrame(rows, columns=["annotator", "label", "error types", "note", "seconds", "revision"])
