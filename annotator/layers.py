"""Judgement layers: the one place that says whose judgements count.

A *layer* picks one judgement per caption out of the current judgements of a
project. Agreement, adjudication, the error tables, correction queues,
correction sets and the rescoring table all read judgements through this
module, so every figure that names a layer means the same captions.

Layers
------
``annotator:NAME`` (or just ``NAME``) — :meth:`Layer.annotator`
    that annotator's current annotations, as they are.

``adjudicated`` (or ``adjudication``) — :data:`ADJUDICATED`
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

``consensus`` — :data:`CONSENSUS`
    the annotators alone: rules 2–5 of the adjudicated layer, with every
    adjudication ignored. It is what the annotators agree on before any lead
    decides, so set beside the adjudicated layer it shows what adjudication
    changed. Types follow the same rule as in the adjudicated layer (open when
    they differ), so the two layers differ only by the leads' decisions.

Only current judgements count and skipped items (no label) are ignored. The
words ``adjudicated``, ``adjudication`` and ``consensus`` are layer names: an
annotator with one of these names is written ``annotator:NAME``.

The frame algebra
-----------------
A judgement frame (``annotator.store.analysis_queries.judgement_frame`` with
categorical columns, or ``annotator.store.judgements.current_frame`` with
strings) is turned once into plain arrays (:func:`select_rows` →
:class:`JudgementRows`). Error-type sets are int64 bit masks over the taxonomy
order (:func:`type_bitmasks`, :func:`masks_to_ids`, :func:`type_counts`), which
makes set equality, intersection and counting vectorised; captions and users
are integer codes (:func:`recode`, :func:`factorize_sorted`).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import InputError
from .model import JudgementKind, Label
from .taxonomy import taxonomy

__all__ = ["Layer", "ADJUDICATED", "CONSENSUS", "LAYER_KINDS", "parse_layer", "optional_layer", "layer_name",
           "available_layers", "STATUSES", "JudgementLayer", "build_layer", "JudgementRows", "select_rows",
           "type_bitmasks", "masks_to_ids", "type_bits", "type_counts", "as_categorical", "recode",
           "factorize_sorted", "first_of_runs", "last_of_runs", "newest_per_caption", "layer_judgement_ids"]

ANNOTATION = JudgementKind.ANNOTATION.value
ADJUDICATION = JudgementKind.ADJUDICATION.value
_INACCURATE = Label.INACCURATE.value

#: The kinds of layer, as :attr:`Layer.kind` holds them.
LAYER_KINDS = ("annotator", "adjudicated", "consensus")
# Accepted spellings of a kind: the layer names, and the judgement kinds the correction code used.
_KIND_OF = {"annotator": "annotator", "annotation": "annotator", "adjudicated": "adjudicated",
            "adjudication": "adjudicated", "consensus": "consensus"}
_CHOICES = "'adjudicated', 'consensus' or 'annotator:NAME'"


# ------------------------------------------------------------------ the choice of layer

class Layer(namedtuple("Layer", ("kind", "user"))):
    """A parsed choice of layer: ``kind`` is one of :data:`LAYER_KINDS`, ``user`` the annotator (annotator layers only).

    A tuple ``(kind, user)``: ``Layer("adjudicated")``, ``Layer.annotator("alice")``. The
    kinds "annotation" and "adjudication" are accepted as other spellings of "annotator"
    and "adjudicated". ``str(layer)`` is :attr:`label`, and ``parse_layer(str(layer)) == layer``.
    """

    __slots__ = ()

    def __new__(cls, kind: str, user: str | None = None):
        k = _KIND_OF.get(str(kind).strip().lower())
        if k is None:
            raise InputError(f"unknown kind of layer {kind!r}; choose from {', '.join(LAYER_KINDS)}")
        if k == "annotator":
            user = str(user if user is not None else "").strip()
            if not user:
                raise InputError(f"an annotator layer needs a user name, e.g. annotator:alice (not {kind!r} alone)")
        elif user is not None:
            raise InputError(f"the {k} layer belongs to no single user (got {user!r})")
        return super().__new__(cls, k, user)

    @classmethod
    def annotator(cls, name: str) -> "Layer":
        """The layer of one annotator's own annotations."""
        return cls("annotator", name)

    @property
    def label(self) -> str:
        """How the layer is written on the command line, in exports and in page options."""
        return f"annotator:{self.user}" if self.kind == "annotator" else self.kind

    @property
    def title(self) -> str:
        """A short name for people: "Adjudicated", "Consensus" or "NAME's annotations"."""
        return f"{self.user}'s annotations" if self.kind == "annotator" else self.kind.capitalize()

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return f"Layer({self.kind!r})" if self.user is None else f"Layer({self.kind!r}, {self.user!r})"


ADJUDICATED = Layer("adjudicated")
CONSENSUS = Layer("consensus")


def parse_layer(text: str | Layer) -> Layer:
    """A layer from its written form: ``adjudicated`` (or ``adjudication``), ``consensus``,
    ``annotator:NAME`` or a bare ``NAME``; a :class:`Layer` is returned as it is.

    Case does not matter for the layer words; surrounding spaces are ignored. A blank
    text or ``annotator:`` without a name is an InputError that quotes the text.
    """
    if isinstance(text, Layer):
        return text
    s = str(text if text is not None else "").strip()
    if not s:
        raise InputError(f"choose a layer: {_CHOICES} (got {text!r})")
    word = s.lower()
    if word in ("adjudicated", "adjudication"):
        return ADJUDICATED
    if word == "consensus":
        return CONSENSUS
    if word.startswith("annotator:"):
        name = s.split(":", 1)[1].strip()
        if not name:
            raise InputError(f"layer {text!r} names no annotator: write annotator:NAME, e.g. annotator:alice")
        return Layer.annotator(name)
    return Layer.annotator(s)


def optional_layer(text: str | Layer | None) -> Layer | None:
    """Like :func:`parse_layer`, but None or a blank text mean "no layer" (None): every judgement counts."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    return parse_layer(text)


def layer_name(text: str | Layer) -> str:
    """The canonical spelling of a layer: ``adjudicated``, ``consensus`` or ``annotator:NAME``."""
    return parse_layer(text).label


def available_layers(annotators, *, adjudicated: bool = True, consensus: bool = False) -> list[Layer]:
    """The layers to offer for a project: adjudicated (and consensus) when asked, then one per annotator, in the given order."""
    out = [ADJUDICATED] if adjudicated else []
    if consensus:
        out.append(CONSENSUS)
    return out + [Layer.annotator(a) for a in annotators]


# ------------------------------------------------------------------ error-type masks

def type_bitmasks(error_types, type_ids=None) -> tuple[np.ndarray, set[str]]:
    """Space-separated type strings → int64 bit masks (bit i = ``type_ids[i]``).

    Accepts a Series/array of strings or a Categorical (only its few distinct
    values are parsed). Returns the masks and the set of unknown ids met (they
    are ignored).
    """
    type_ids = tuple(type_ids or taxonomy().ids)
    bit = {t: np.int64(1) << np.int64(i) for i, t in enumerate(type_ids)}
    values = error_types.array if isinstance(error_types, pd.Series) else error_types
    if isinstance(values, pd.Categorical):
        codes, uniques = values.codes, values.categories
    else:
        codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    unknown: set[str] = set()
    lut = np.zeros(len(uniques) + 1, dtype=np.int64)  # last slot: missing (code -1)
    for k, raw in enumerate(uniques):
        m = np.int64(0)
        for t in str(raw).split() if isinstance(raw, str) else ():
            if t in bit:
                m |= bit[t]
            else:
                unknown.add(t)
        lut[k] = m
    return lut[np.asarray(codes)], unknown


def masks_to_ids(mask: int, type_ids=None) -> tuple[str, ...]:
    """One bit mask → the type ids it contains, in taxonomy order."""
    type_ids = tuple(type_ids or taxonomy().ids)
    mask = int(mask)
    return tuple(t for i, t in enumerate(type_ids) if (mask >> i) & 1)


def type_bits(masks: np.ndarray, n_types: int) -> np.ndarray:
    """(N,) masks → (N, T) booleans."""
    return ((masks[:, None] >> np.arange(n_types, dtype=np.int64)) & 1).astype(bool)


def type_counts(masks: np.ndarray, n_types: int) -> np.ndarray:
    """How many masks have each bit set → (T,) int64.

    Masks take few distinct values, so count each distinct mask once
    (bincount over the mask value) and expand only those.
    """
    if len(masks) == 0:
        return np.zeros(n_types, dtype=np.int64)
    if n_types <= 22:
        counts = np.bincount(masks)
        values = np.flatnonzero(counts)
        return (counts[values][:, None] * type_bits(values.astype(np.int64), n_types)).sum(axis=0)
    return np.count_nonzero(type_bits(masks, n_types), axis=0).astype(np.int64)


# ------------------------------------------------------------------ codes and runs

def as_categorical(col) -> pd.Categorical:
    """A column as a Categorical (free for categorical columns, a hash pass otherwise)."""
    values = col.array if isinstance(col, pd.Series) else col
    if isinstance(values, pd.Categorical):
        return values
    return pd.Categorical(np.asarray(values, dtype=object))


def recode(cat: pd.Categorical, names) -> np.ndarray:
    """Codes of ``cat`` re-expressed as positions in ``names`` (−1 when not listed)."""
    lut = np.append(pd.Index(names).get_indexer(cat.categories), -1)
    return lut[np.asarray(cat.codes)]


def factorize_sorted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique values, index of each value in them); a stable sort is fast on the
    nearly sorted ids the store returns."""
    perm = np.argsort(values, kind="stable")
    s = values[perm]
    first = np.empty(len(s), dtype=bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    inverse = np.empty(len(s), dtype=np.int64)
    inverse[perm] = np.cumsum(first) - 1
    return s[first], inverse


def first_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts (input sorted)."""
    first = np.ones(len(sorted_values), dtype=bool)
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=first[1:])
    return first


def last_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    """True where a run of equal values ends (input sorted)."""
    last = np.ones(len(sorted_values), dtype=bool)
    np.not_equal(sorted_values[:-1], sorted_values[1:], out=last[:-1])
    return last


# ------------------------------------------------------------------ judgement rows

@dataclass(frozen=True)
class JudgementRows:
    """Selected judgement rows as plain arrays (no DataFrame copies)."""

    caption_id: np.ndarray
    item_id: np.ndarray
    is_practice: np.ndarray
    system: pd.Categorical
    user: pd.Categorical
    inaccurate: np.ndarray
    types: np.ndarray          # int64 bit masks (0 for accurate judgements)
    judgement_id: np.ndarray
    unknown_types: frozenset

    def __len__(self) -> int:
        return len(self.caption_id)

    def take(self, idx) -> "JudgementRows":
        """A subset (boolean mask or positions)."""
        return JudgementRows(self.caption_id[idx], self.item_id[idx], self.is_practice[idx], self.system[idx],
                             self.user[idx], self.inaccurate[idx], self.types[idx], self.judgement_id[idx],
                             self.unknown_types)


def select_rows(frame: pd.DataFrame, kind: str, *, system: str | None = None, user: str | None = None,
                type_ids=None) -> JudgementRows:
    """Rows of ``kind`` ("annotation"/"adjudication") with a label (optionally one system / one user),
    extracted once as arrays.

    Accepts the frames of ``analysis_queries.judgement_frame`` (categoricals) and of
    ``judgements.current_frame`` (strings); missing optional columns get neutral values.
    """
    missing = {"caption_id", "user", "label", "error_types"} - set(frame.columns)
    if missing:
        raise InputError(f"judgement frame lacks columns {sorted(missing)}")
    n = len(frame)
    mask = np.array(frame["label"].notna(), dtype=bool)  # a writable copy
    if "kind" in frame.columns:
        mask &= np.asarray(frame["kind"] == kind)
    elif kind != ANNOTATION:
        mask[:] = False
    if system is not None and "system" in frame.columns:
        mask &= np.asarray(frame["system"] == system)
    users = as_categorical(frame["user"])
    if user is not None:
        mask &= np.asarray(users.codes) == users.categories.get_indexer([user])[0] if user in users.categories else False
    masks, unknown = type_bitmasks(frame["error_types"], type_ids)
    inacc = np.asarray(frame["label"] == _INACCURATE)
    systems = as_categorical(frame["system"]) if "system" in frame.columns else pd.Categorical([None] * n)

    def col(name, default, dtype):
        return frame[name].to_numpy(dtype=dtype)[mask] if name in frame.columns else np.full(int(mask.sum()), default, dtype)

    return JudgementRows(
        caption_id=frame["caption_id"].to_numpy(dtype=np.int64)[mask],
        item_id=col("item_id", 0, np.int64),
        is_practice=col("is_practice", False, bool),
        system=systems[mask], user=users[mask], inaccurate=inacc[mask],
        types=np.where(inacc, masks, 0)[mask],
        judgement_id=col("judgement_id", 0, np.int64) if "judgement_id" in frame.columns else np.flatnonzero(mask),
        unknown_types=frozenset(unknown))


def newest_per_caption(rows: JudgementRows) -> np.ndarray:
    """Positions in ``rows`` of the newest judgement (highest judgement id) of each caption, by caption id."""
    order = np.lexsort((rows.judgement_id, rows.caption_id))
    return order[last_of_runs(rows.caption_id[order])]


# ------------------------------------------------------------------ resolved layers

#: How a caption's judgement in a layer came about (see the module docstring).
STATUSES = ("annotator", "adjudicated", "single", "agreed", "types open")


@dataclass(frozen=True)
class JudgementLayer:
    """One resolved judgement per caption (arrays aligned on ``caption_ids``, sorted)."""

    name: str                    # the layer's label
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

    def caption_types(self) -> dict[int, tuple[str, ...]]:
        """caption_id → error types (taxonomy order) of the inaccurate captions whose types the layer knows."""
        out: dict[int, tuple[str, ...]] = {}
        for cid, inacc, known, mask in zip(self.caption_ids.tolist(), self.inaccurate.tolist(),
                                           self.types_known.tolist(), self.types.tolist()):
            if inacc and known and mask:
                out[cid] = masks_to_ids(mask, self.type_ids)
        return out

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


def _empty_layer(name: str, type_ids) -> JudgementLayer:
    e = np.array([], dtype=np.int64)
    return JudgementLayer(name, e, e, np.array([], bool), pd.Categorical([]), np.array([], bool), e,
                          np.array([], bool), pd.Categorical([], categories=list(STATUSES)), e, type_ids)


def build_layer(frame: pd.DataFrame, layer: Layer | str, *, system: str | None = None, type_ids=None) -> JudgementLayer:
    """Resolve ``frame`` (current judgements, both kinds) into one judgement per caption.

    ``layer``: a :class:`Layer` or its written form (see :func:`parse_layer`); the module
    docstring gives the exact rules. ``system`` keeps one system's captions.
    """
    type_ids = tuple(type_ids or taxonomy().ids)
    layer = parse_layer(layer)
    name = layer.label
    statuses = list(STATUSES)
    if layer.kind == "annotator":
        r = select_rows(frame, ANNOTATION, system=system, user=layer.user, type_ids=type_ids)
        if not len(r):
            return _empty_layer(name, type_ids)
        order = np.argsort(r.caption_id, kind="stable")
        r = r.take(order)
        if not first_of_runs(r.caption_id).all():
            raise InputError(f"{layer.user!r} has more than one current annotation of a caption")
        n = len(r)
        return JudgementLayer(name, r.caption_id, r.item_id, r.is_practice, r.system, r.inaccurate, r.types,
                              np.ones(n, bool), pd.Categorical.from_codes(np.zeros(n, np.int8), categories=statuses),
                              np.array([], np.int64), type_ids, tuple(sorted(r.unknown_types)))

    # Adjudicated layer: the annotators' consensus per caption, overridden by adjudications.
    # The consensus layer is the same without the adjudications.
    ann = select_rows(frame, ANNOTATION, system=system, type_ids=type_ids)
    if layer.kind == "adjudicated":
        adj = select_rows(frame, ADJUDICATION, system=system, type_ids=type_ids)
    else:
        adj = ann.take(np.zeros(len(ann), bool))
    unknown = set(ann.unknown_types) | set(adj.unknown_types)
    ann = ann.take(np.argsort(ann.caption_id, kind="stable"))
    first = first_of_runs(ann.caption_id)
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
    newest = adj.take(newest_per_caption(adj)) if len(adj) else adj

    # Consensus first, adjudications after: for a caption in both, the adjudication (later) wins.
    cap = np.concatenate([cons.caption_id, newest.caption_id])
    order = np.lexsort((np.arange(len(cap)), cap))
    pick = order[last_of_runs(cap[order])]

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


def layer_judgement_ids(frame: pd.DataFrame, layer: Layer | str, *, system: str | None = None) -> np.ndarray:
    """Judgement ids (sorted) of the current judgements a layer's decisions rest on.

    An annotator layer: that annotator's annotations. The adjudicated and consensus layers: for each caption
    in the layer, the newest adjudication when a lead decided it (adjudicated layer only), else every
    annotation of the caption (one for a single judgement, all of them when they agree or leave the types
    open). Unresolved captions contribute nothing. ``frame`` needs the judgement_id column.
    """
    layer = parse_layer(layer)
    if "judgement_id" not in frame.columns:
        raise InputError("the judgement frame has no judgement ids")
    if layer.kind == "annotator":
        return np.sort(select_rows(frame, ANNOTATION, system=system, user=layer.user).judgement_id)
    built = build_layer(frame, layer, system=system)
    decided = built.caption_ids[np.asarray(built.status) == "adjudicated"]
    ann = select_rows(frame, ANNOTATION, system=system)
    parts = [ann.judgement_id[np.isin(ann.caption_id, built.caption_ids) & ~np.isin(ann.caption_id, decided)]]
    if len(decided):
        adj = select_rows(frame, ADJUDICATION, system=system)
        newest = adj.take(newest_per_caption(adj))
        parts.append(newest.judgement_id[np.isin(newest.caption_id, decided)])
    return np.sort(np.concatenate(parts))
