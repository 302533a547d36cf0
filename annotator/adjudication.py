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

from .access import LEADS, require_role
from .errors import InputError
from .layers import ADJUDICATION, ANNOTATION, factorize_sorted, masks_to_ids, newest_per_caption, recode, select_rows
from .model import Box, Judgement, JudgementKind, Label, Role
from .taxonomy import taxonomy

__all__ = ["adjudication_queue", "adjudicate", "CaptionCase", "caption_case"]


# ------------------------------------------------------------------ queue

def adjudication_queue(frame: pd.DataFrame, *, annotators=None, system: str | None = None,
                       include_types: bool = True, include_done: bool = True, type_ids=None) -> pd.DataFrame:
    """Captions that need (or had) a lead's decision, one row each, by caption id.

    A caption is in the queue when two or more of ``annotators`` (default: all)
    judged it and their labels differ ("label"), or, with ``include_types``, all
    said inaccurate with different types ("types"). Captions with an
    adjudication are kept when ``include_done`` (column ``adjudicated``).
    Columns: caption_id, item_id, system, is_practice, disagreement, annotators
    (how many judged), inaccurate (how many said so), label_<user>/types_<user>
    per annotator (missing when that annotator did not judge it), adjudicated,
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
    sel = np.flatnonzero(label_diff | type_diff)

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


# ------------------------------------------------------------------ saving and viewing

def adjudicate(store, caption_id: int, lead: str, lead_role: Role | str, label: Label | str, error_types=(), *,
               note: str = "", seconds: float = 0.0, create_user: bool = False) -> int:
    """Store a lead's final judgement of a caption (kind "adjudication"); return its revision.

    Only leads and admins may adjudicate (PermissionDenied otherwise). The
    judgement follows the annotation rules: a label is required, *inaccurate*
    needs at least one error type, *accurate* has none, "Other" needs a note.
    ``create_user`` creates the lead's account row if missing (local mode).
    """
    from .store.judgements import require_caption, save_judgement
    from .store.users import user_id
    require_role(lead_role, LEADS, "adjudication")
    types = _validate(label, error_types, note)
    with store.transaction() as conn:
        require_caption(conn, int(caption_id))
        uid = user_id(conn, lead, create_role=Role(lead_role) if create_user else None)
    return save_judgement(store, int(caption_id), uid, label=Label(label), error_types=types, note=note or "",
                          seconds=float(seconds or 0.0), kind=JudgementKind.ADJUDICATION)


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
    from .store.analysis_queries import caption_details, caption_judgements, image_root, item_boxes
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
        adjudications=tuple(j for j in judgements if j.kind is JudgementKind.ADJUDICATION), trusted_image_root=trusted)
