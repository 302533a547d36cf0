"""The default correction plan: which error types to correct, chosen from the error tables.

The error-analysis study corrected the five most frequent error types of its fine-grained annotation, leaving
out Generally unrelated (a caption unrelated to its image cannot be fixed conservatively). The plan repeats that
choice on a project's own error tables: the error types counted in one judgement layer (optionally one system),
most frequent first, the types the taxonomy marks as not correctable left out, types nobody ticked left out,
ties in taxonomy order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import FieldAccess
from ..taxonomy import taxonomy

#: How many types the study corrected.
PLAN_SIZE = 5


@dataclass(frozen=True)
class CorrectionPlan(FieldAccess):
    """The types to correct, most frequent first, with their counts in the layer's error table."""

    layer: str
    system: str | None
    types: tuple[str, ...]
    counts: dict[str, int]
    left_out: tuple[str, ...]  # frequent types that are not correctable (Generally unrelated)

    def describe(self) -> str:
        """One line for the CLI and the page: the planned types with their counts."""
        if not self.types:
            return "No error type is annotated yet: nothing to plan."
        parts = [f"{taxonomy().get(t).name} ({self.counts[t]})" for t in self.types]
        return f"Correction plan ({self.layer}{', ' + self.system if self.system else ''}): " + ", ".join(parts)


def plan_from_counts(type_counts: dict[str, int], *, layer: str, system: str | None = None,
                     size: int = PLAN_SIZE) -> CorrectionPlan:
    """The plan for error-type counts (type id → count, as in :class:`annotator.analysis.ErrorTables`)."""
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    ranked = sorted((t for t, c in type_counts.items() if c > 0 and t in order), key=lambda t: (-type_counts[t], order[t]))
    chosen = [t for t in ranked if taxonomy().get(t).correctable][:size]
    cut = type_counts[chosen[-1]] if len(chosen) == size else 0
    left_out = tuple(t for t in ranked if not taxonomy().get(t).correctable and type_counts[t] >= cut)
    return CorrectionPlan(layer=layer, system=system, types=tuple(chosen), counts={t: int(type_counts[t]) for t in chosen},
                          left_out=left_out)


def correction_plan(store, project: str, *, system: str | None = None, layer=None, size: int = PLAN_SIZE,
                    exclude_practice: bool = True) -> CorrectionPlan:
    """The default correction plan of a project (or one system) from the error table of ``layer``.

    Without a layer: for a system, the one the by-type table would use
    (:func:`annotator.correction.default_layer`; InputError with several annotators and no adjudication);
    for the whole project, the adjudicated layer. Practice items are left out of the counts by default.
    """
    from ..analysis import error_tables
    from ..layers import build_layer, optional_layer
    from ..store.analysis_queries import judgement_frame
    from .queues import default_layer
    chosen = optional_layer(layer)
    if chosen is None and system is not None:
        chosen = default_layer(store, project, system)
    if chosen is None:
        from ..layers import ADJUDICATED
        chosen = ADJUDICATED
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
    if not len(frame):
        return CorrectionPlan(layer=chosen.label, system=system, types=(), counts={}, left_out=())
    tables = error_tables(build_layer(frame, chosen, system=system), system=system, exclude_practice=exclude_practice)
    return plan_from_counts(tables.type_counts, layer=chosen.label, system=system, size=size)
