"""Correction sets: stored corrections turned into caption lists for rescoring."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..taxonomy import taxonomy
from .tokens import _NO_SPACE_AFTER, _NO_SPACE_BEFORE, Edit, align, tokenize

if TYPE_CHECKING:  # the layers module (numpy, pandas) is imported where a layer is used
    from ..layers import Layer


@dataclass(frozen=True)
class Merge:
    """The "all corrections" text of one caption."""

    text: str
    applied: tuple[str, ...]
    conflicting: tuple[str, ...]



def _detokenize(tokens: list[str]) -> str:
    out = ""
    for t in tokens:
        if out and t not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out += " "
        out += t
    return out


def _overlaps(x: Edit, y: Edit) -> bool:
    if x.i1 == x.i2 and y.i1 == y.i2:
        return x.i1 == y.i1  # two insertions at one place: order unknown
    if x.i1 == x.i2:
        return y.i1 < x.i1 < y.i2
    if y.i1 == y.i2:
        return x.i1 < y.i1 < x.i2
    return x.i1 < y.i2 and y.i1 < x.i2


def merge_corrections(original: str, corrected_by_type: dict[str, str]) -> Merge:
    """Combine corrections of several types made independently on the same original.

    One correction is used as written. With several, the word-level edits of
    each type (relative to the original) are applied together when they touch
    different words; a type whose edits overlap those of a type earlier in
    the taxonomy is left out and reported in ``conflicting``. The merged text
    is rebuilt from tokens (punctuation attached to the preceding word), which
    the metrics' tokenizer treats exactly like the original spacing.
    """
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    types = sorted(corrected_by_type, key=lambda t: order.get(t, len(order)))
    if not types:
        return Merge(original, (), ())
    if len(types) == 1:
        return Merge(corrected_by_type[types[0]], (types[0],), ())
    ta = [t.text for t in tokenize(original)]
    accepted: list[Edit] = []
    applied, conflicting = [], []
    for t in types:
        edits = align(original, corrected_by_type[t])
        if any(_overlaps(e, x) for e in edits for x in accepted):
            conflicting.append(t)
            continue
        accepted.extend(edits)
        applied.append(t)
    if len(applied) == 1:
        return Merge(corrected_by_type[applied[0]], tuple(applied), tuple(conflicting))
    out: list[str] = []
    pos = 0
    # Insertions at a point come before a replacement starting there.
    for e in sorted(accepted, key=lambda e: (e.i1, e.i2 != e.i1)):
        out.extend(ta[pos:e.i1])
        out.extend(e.new)
        pos = max(pos, e.i2)
    out.extend(ta[pos:])
    return Merge(_detokenize(out), tuple(applied), tuple(conflicting))


@dataclass
class CorrectionSet:
    """A system's captions with its corrections, ready for rescoring.

    ``baseline`` is the captions in line order; ``by_type[type][line_no]`` the
    corrected text of a caption for a type (untouched decisions left out);
    ``untouched[type]`` counts deliberate no-change decisions; ``overrides``
    lists corrections saved past a guard; ``conflicts`` the lines whose
    corrections could not all be merged into the "all" variant; ``dropped``
    the corrections left out because the chosen layer no longer gives the
    caption that type.
    """

    project: str
    system: str
    baseline: list[str]
    line_caption_ids: list[int]
    by_type: dict[str, dict[int, str]] = field(default_factory=dict)
    untouched: dict[str, int] = field(default_factory=dict)
    overrides: list[dict] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    dropped: int = 0
    _all: list[str] | None = None

    @property
    def types(self) -> list[str]:
        """Types with at least one real correction, in taxonomy order."""
        return [t for t in taxonomy().ids if self.by_type.get(t)]

    def variant(self, error_type: str) -> list[str]:
        """Captions with only ``error_type``'s corrections applied."""
        hyps = list(self.baseline)
        for line, text in self.by_type.get(error_type, {}).items():
            hyps[line] = text
        return hyps

    def variants(self) -> dict[str, list[str]]:
        """One caption list per corrected type (taxonomy order)."""
        return {t: self.variant(t) for t in self.types}

    def changed(self, error_type: str) -> int:
        """Captions whose text the type's corrections change."""
        return sum(1 for line, text in self.by_type.get(error_type, {}).items() if text != self.baseline[line])

    def all_variant(self) -> list[str]:
        """Captions with every type's corrections merged (see :func:`merge_corrections`)."""
        if self._all is None:
            hyps = list(self.baseline)
            conflicts = []
            lines = sorted({line for d in self.by_type.values() for line in d})
            for line in lines:
                per_type = {t: d[line] for t, d in self.by_type.items() if line in d}
                merged = merge_corrections(self.baseline[line], per_type)
                hyps[line] = merged.text
                if merged.conflicting:
                    conflicts.append({"line_no": line, "caption_id": self.line_caption_ids[line],
                                      "applied": list(merged.applied), "left_out": list(merged.conflicting)})
            self._all = hyps
            self.conflicts = conflicts
        return list(self._all)


def correction_set(store, project: str, system: str, *, layer: Layer | str | None = None,
                   correctors: list[str] | None = None, types: list[str] | None = None) -> CorrectionSet:
    """Build a :class:`CorrectionSet` from the stored current corrections of a system.

    ``correctors`` limits to corrections by these users; when several users
    corrected the same caption for the same type the most recent correction
    wins. With a ``layer``, a correction counts only if the caption's
    judgement in that layer still carries the type (an adjudication that
    removed the type drops the correction). ``types`` limits the types.
    """
    from ..layers import optional_layer
    from .queues import layer_types
    from ..store.correction_queries import system_corrections
    from ..store.projects import captions_of_system, project_id
    layer = optional_layer(layer)
    with store.read() as conn:
        pid = project_id(conn, project)
        caps = captions_of_system(conn, pid, system)
        rows = system_corrections(conn, pid, system, only_users=correctors)
    carried = layer_types(store, project, system, layer) if layer is not None else None
    baseline = [c.text for c in caps]
    line_of = {c.id: c.line_no for c in caps}
    cs = CorrectionSet(project, system, baseline, [c.id for c in caps])
    wanted = set(types) if types else None
    latest: dict[tuple[int, str], object] = {}
    for r in rows:
        if wanted is not None and r.error_type not in wanted:
            continue
        # A decision to leave a caption untouched changes nothing, so the layer has nothing to drop there.
        if carried is not None and r.corrected_text is not None and r.error_type not in carried.get(r.caption_id, ()):
            cs.dropped += 1
            continue
        key = (r.caption_id, r.error_type)
        if key not in latest or (r.created_at, r.correction_id) > (latest[key].created_at, latest[key].correction_id):
            latest[key] = r
    for (cid, etype), r in sorted(latest.items(), key=lambda kv: (line_of[kv[0][0]], kv[0][1])):
        line = line_of[cid]
        if r.corrected_text is None:
            cs.untouched[etype] = cs.untouched.get(etype, 0) + 1
            continue
        cs.by_type.setdefault(etype, {})[line] = r.corrected_text
        if r.override_reason:
            cs.overrides.append({"line_no": line, "caption_id": cid, "error_type": etype, "user": r.user,
                                 "corrected_text": r.corrected_text, "override_reason": r.override_reason})
    return cs
