"""Adjudication: resolving disagreements, and the judgement layers analysis reads.

Layers
------
A *layer* says whose judgement of each caption the error analysis uses:

``"annotator:NAME"`` (or just ``"NAME"``)
    that annotator's current annotations, as they are.

``"adjudicated"``
    one judgement per caption, chosen in this order:

    1. **adjudicated** — a lead's adjudication (kind "adjudication") exists: it
       wins. With several leads, the newest adjudication (highest judgement id,
       i.e. the latest save) counts.
    2. **single** — only one annotator judged the caption: their judgement.
    3. **agreed** — every annotator who judged it gave the same label and, when
       that label is *inaccurate*, ticked exactly the same error types.
    4. **types open** — all said *inaccurate* but their types differ: the
       caption counts as inaccurate, its types are unknown until adjudicated
       (it adds to the inaccurate share, not to the error counts).
    5. **unresolved** — the labels differ and nobody adjudicated yet: the
       caption is left out of the layer, and counted as unresolved.

    Only current judgements count and skipped items (no label) are ignored.

The adjudication queue (:func:`adjudication_queue`) lists exactly the
captions of cases 4 and 5, plus, for review, those already adjudicated.

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
from .agreement import _factorize_sorted, _recode, _select_rows, masks_to_ids
from .errors import InputError
from .model import Box, Judgement, JudgementKind, Label, Role
from .taxonomy import taxonomy

__all__ = ["ADJUDICATED", "STATUSES", "JudgementLayer", "parse_layer", "layer_name", "build_layer",
           "adjudication_queue", "adjudicate", "CaptionCase", "caption_case"]

ADJUDICATED = "adjudicated"
#: How a caption's judgement in a layer came about (see the module docstring).
STATUSES = ("annotator", "adjudicated", "single", "agreed", "types open")
_ANNOTATION = JudgementKind.ANNOTATION.value
_ADJUDICATION = JudgementKind.ADJUDICATION.value
_INACCURATE = Label.INACCURATE.value


def parse_layer(text: str) -> tuple[str, str | None]:
    """``"adjudicated"`` → ("adjudicated", None); ``"annotator:NAME"`` or ``"NAME"`` → ("annotator", NAME)."""
    s = str(text or "").strip()
    if not s:
        raise InputError("choose a layer: 'adjudicated' or 'annotator:NAME'")
    if s.lower() in ("adjudicated", "adjudication"):
        return ADJUDICATED, None
    if s.lower().startswith("annotator:"):
        s = s.split(":", 1)[1].strip()
        if not s:
            raise InputError("'annotator:' needs a user name after the colon")
    return "annotator", s


def layer_name(text: str) -> str:
    """The canonical spelling of a layer: ``"adjudicated"`` or ``"annotator:NAME"``."""
    kind, user = parse_layer(text)
    return ADJUDICATED if kind == ADJUDICATED else f"annotator:{user}"


@dataclass(frozen=True)
class JudgementLayer:
    """One resolved judgement per caption (arrays aligned on ``caption_ids``, sorted)."""

    name: str
    caption_ids: np.ndarray
    item_ids: np.ndarray
    is_practice: np.ndarray
    systems: pd.Categorical
    inaccurate: np.ndarray       # bool
    types: np.ndarray            # int64 bit masks (taxonomy order); 0 when unknown
    types_known: np.ndarray      # bool: False for "types open"
    status: pd.Categorical       # one of STATUSES
    unresolved_ids: np.ndarray   # captions left out: labels differ, no adjudication
    type_ids: tuple[str, ...]
    unknown_types: tuple[str, ...] = ()
    unresolved_systems: pd.Categorical | None = None  # system of each unresolved caption

    def unresolved_in(self, system: str | None = None) -> int:
        """Unresolved captions, optionally of one system."""
        if system is None or self.unresolved_systems is None:
            return self.unresolved
        return int((np.asarray(self.unresolved_systems, dtype=object) == system).sum())

    def __len__(self) -> int:
        return len(self.caption_ids)

    @property
    def unresolved(self) -> int:
        """How many captions the layer leaves out (labels differ, not adjudicated)."""
        return int(len(self.unresolved_ids))

    def status_counts(self) -> dict[str, int]:
        """Captions per status (only statuses that occur)."""
        counts = pd.Series(self.status).value_counts()
        return {str(k): int(v) for k, v in counts.items() if v}

    def frame(self, rows=None) -> pd.DataFrame:
        """The layer (or the given row positions) as a table: caption_id, item_id, system,
        label, types (space-separated ids), errors (count; NaN when unknown), status, is_practice."""
        sel = np.arange(len(self)) if rows is None else np.asarray(rows)
        masks = self.types[sel]
        uniq, inv = np.unique(masks, return_inverse=True) if len(masks) else (np.array([], np.int64), np.array([], int))
        names = np.array([" ".join(masks_to_ids(m, self.type_ids)) for m in uniq], dtype=object)
        known = self.types_known[sel]
        errors = np.where(known & self.inaccurate[sel], np.bitwise_count(masks), 0).astype(float)
        errors[~known] = np.nan
        return pd.DataFrame({
            "caption_id": self.caption_ids[sel], "item_id": self.item_ids[sel],
            "system": np.asarray(self.systems, dtype=object)[sel],
            "label": np.where(self.inaccurate[sel], Label.INACCURATE.value, Label.ACCURATE.value),
            "types": names[inv] if len(masks) else np.array([], object), "errors": errors,
            "status": np.asarray(self.status, dtype=object)[sel], "is_practice": self.is_practice[sel]})


def _empty_layer(name: str, type_ids, unresolved=np.array([], np.int64), unresolved_systems=None) -> JudgementLayer:
    e = np.array([], dtype=np.int64)
    return JudgementLayer(name, e, e, np.array([], bool), pd.Categorical([]), np.array([], bool), e,
                          np.array([], bool), pd.Categorical([], categories=list(STATUSES)), unresolved, type_ids,
                          (), unresolved_systems)


def _first_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts (input sorted)."""
    first = np.ones(len(sorted_values), dtype=bool)
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=first[1:])
    return first


def _last_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    """True where a run of equal values ends (input sorted)."""
    last = np.ones(len(sorted_values), dtype=bool)
    np.not_equal(sorted_values[:-1], sorted_values[1:], out=last[:-1])
    return last


def _newest_adjudications(adj) -> np.ndarray:
    """Positions in ``adj`` of the newest adjudication of each caption, by caption id."""
    order = np.lexsort((adj.judgement_id, adj.caption_id))
    return order[_last_of_runs(adj.caption_id[order])]


def build_layer(frame: pd.DataFrame, layer: str, *, system: str | None = None, type_ids=None) -> JudgementLayer:
    """Resolve ``frame`` (current judgements, both kinds) into one judgement per caption.

    ``layer``: ``"adjudicated"`` or an annotator (``"annotator:NAME"``/``"NAME"``); see the
    module docstring for the exact rules. ``system`` keeps one system's captions.
    """
    type_ids = tuple(type_ids or taxonomy().ids)
    kind, user = parse_layer(layer)
    name = layer_name(layer)
    statuses = list(STATUSES)
    if kind == "annotator":
        r = _select_rows(frame, _ANNOTATION, system=system, user=user, type_ids=type_ids)
        if not len(r):
            return _empty_layer(name, type_ids)
        order = np.argsort(r.caption_id, kind="stable")
        r = r.take(order)
        if not _first_of_runs(r.caption_id).all():
            raise InputError(f"{user!r} has more than one current annotation of a caption")
        n = len(r)
        return JudgementLayer(name, r.caption_id, r.item_id, r.is_practice, r.system, r.inaccurate, r.types,
                              np.ones(n, bool), pd.Categorical.from_codes(np.zeros(n, np.int8), categories=statuses),
                              np.array([], np.int64), type_ids, tuple(sorted(r.unknown_types)))

    # Adjudicated layer: the annotators' consensus per caption, overridden by adjudications.
    ann = _select_rows(frame, _ANNOTATION, system=system, type_ids=type_ids)
    adj = _select_rows(frame, _ADJUDICATION, system=system, type_ids=type_ids)
    unknown = set(ann.unknown_types) | set(adj.unknown_types)
    ann = ann.take(np.argsort(ann.caption_id, kind="stable"))
    first = _first_of_runs(ann.caption_id)
    starts = np.flatnonzero(first)
    head = ann.take(starts)  # one row per caption: its id, item, system
    if len(ann):
        m = np.diff(np.append(starts, len(ann)))
        ones = np.add.reduceat(ann.inaccurate.astype(np.int64), starts)
        types_same = np.minimum.reduceat(ann.types, starts) == np.maximum.reduceat(ann.types, starts)
    else:
        m = ones = np.array([], np.int64)
        types_same = np.array([], bool)
    all_inacc = ones == m
    agreed = (ones == 0) | all_inacc
    status = np.where(m == 1, 2, np.where(types_same | ~all_inacc, 3, 4)).astype(np.int8)
    cons = head.take(agreed)
    cons_known = (types_same | ~all_inacc)[agreed]
    cons_types = np.where(types_same & all_inacc, ann.types[starts], 0)[agreed]
    newest = adj.take(_newest_adjudications(adj)) if len(adj) else adj

    # Consensus first, adjudications after: for a caption in both, the adjudication (later) wins.
    cap = np.concatenate([cons.caption_id, newest.caption_id])
    order = np.lexsort((np.arange(len(cap)), cap))
    pick = order[_last_of_runs(cap[order])]

    def both(a, b):
        return np.concatenate([a, b])[pick]

    sys_codes = both(np.asarray(cons.system.codes), np.asarray(newest.system.codes))
    unresolved = head.take(~agreed)
    still = ~np.isin(unresolved.caption_id, newest.caption_id)
    unresolved = unresolved.take(still)
    return JudgementLayer(
        name, cap[pick], both(cons.item_id, newest.item_id), both(cons.is_practice, newest.is_practice),
        pd.Categorical.from_codes(sys_codes, categories=ann.system.categories if len(ann) else newest.system.categories),
        both(cons.inaccurate & all_inacc[agreed], newest.inaccurate), both(cons_types, newest.types),
        both(cons_known, np.ones(len(newest), bool)),
        pd.Categorical.from_codes(both(status[agreed], np.full(len(newest), 1, np.int8)), categories=statuses),
        unresolved.caption_id, type_ids, tuple(sorted(unknown)), unresolved.system)


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
    ann = _select_rows(frame, _ANNOTATION, system=system, type_ids=type_ids)
    if annotators is None:
        annotators = sorted(str(u) for u in pd.unique(np.asarray(ann.user, dtype=object)))
    annotators = tuple(annotators)
    codes = _recode(ann.user, annotators)
    ann = ann.take(codes >= 0)
    codes = codes[codes >= 0]
    uniq, row = _factorize_sorted(ann.caption_id)
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
    adj = _select_rows(frame, _ADJUDICATION, system=system, type_ids=type_ids)
    newest = adj.take(_newest_adjudications(adj)) if len(adj) else adj
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

    @property
    def adjudication(self) -> Judgement | None:
        """The adjudication that counts (the newest), or None."""
        if not self.adjudications:
            return None
        return max(self.adjudications, key=lambda j: j.judgement_id or 0)

    def image_png(self, *, max_side: int = 1024) -> tuple[bytes, str | None]:
        """The item's image with its gold boxes as PNG, and a message when the photo cannot be
        used (no root, path refused): then the boxes are drawn on a neutral canvas."""
        from .images import render_boxes_png
        size = {"width": self.width, "height": self.height, "max_side": max_side}
        try:
            return render_boxes_png(self.image_root, self.image_path, self.boxes, **size), None
        except InputError as exc:
            return render_boxes_png(None, None, self.boxes, **size), str(exc)

    def image_file(self) -> Path | None:
        """The image's path under the root (checked not to leave it), or None when unset."""
        if not self.image_path or not self.image_root:
            return None
        from .images import resolve_image_path
        return resolve_image_path(self.image_root, self.image_path)


def caption_case(store, project: str, caption_id: int) -> CaptionCase:
    """Load one caption with its item, boxes, annotations and adjudications (NotFound if absent)."""
    from .errors import NotFound
    from .store.analysis_queries import caption_details, caption_judgements, image_root, item_boxes
    details = caption_details(store, project, [caption_id])
    if details.empty:
        raise NotFound(f"project {project!r} has no caption with id {caption_id}")
    d = details.iloc[0]
    judgements = caption_judgements(store, int(caption_id))
    return CaptionCase(
        caption_id=int(d.caption_id), item_id=int(d.item_id), item_key=str(d.item_key), system=str(d.system),
        line_no=int(d.line_no), text=str(d.text), image_root=image_root(store, project),
        image_path=None if pd.isna(d.image_path) else str(d.image_path),
        width=None if pd.isna(d.width) else int(d.width), height=None if pd.isna(d.height) else int(d.height),
        is_practice=bool(d.is_practice), boxes=tuple(item_boxes(store, int(d.item_id))),
        annotations=tuple(j for j in judgements if j.kind is JudgementKind.ANNOTATION),
        adjudications=tuple(j for j in judgements if j.kind is JudgementKind.ADJUDICATION))
