"""What to correct: the captions a judgement layer tags with a type, and the project's state fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError, NotFound
from ..model import FieldAccess
from ..taxonomy import taxonomy

if TYPE_CHECKING:  # the layers module (numpy, pandas) is imported where a layer is used
    from ..layers import Layer


@dataclass(frozen=True)
class CurrentCorrection(FieldAccess):
    """A corrector's current correction of a queued caption (``corrected_text`` None: left untouched)."""

    corrected_text: str | None
    override_reason: str | None
    revision: int


@dataclass(frozen=True)
class QueueEntry(FieldAccess):
    """One caption to correct: where it is, its text, the types its layer judgement carries, the
    corrector's current correction for the queue's type (None while it is open), and the error spans of the
    queue's type that the layer's judgements mark (annotator.spans.Span; empty when none)."""

    caption_id: int
    line_no: int
    item_key: str
    item_id: int
    text: str
    error_types: tuple[str, ...]
    correction: CurrentCorrection | None
    spans: tuple = ()


def layer_types(store, project: str, system: str, layer: Layer | str) -> dict[int, tuple[str, ...]]:
    """caption_id → error types (taxonomy order) of the inaccurate captions of ``system`` whose types
    ``layer`` knows; resolved by annotator.layers.build_layer, the same rules the analysis uses."""
    from ..layers import build_layer
    from ..store.analysis_queries import judgement_frame
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
    return build_layer(frame, layer, system=system).caption_types()


def queue(store, project: str, system: str, error_type: str, layer: Layer | str, *, user: str | None = None) -> list[QueueEntry]:
    """The captions to correct: every caption of ``system`` whose judgement in ``layer`` carries ``error_type``.

    Each :class:`QueueEntry` has caption_id, line_no, item_key, item_id, text,
    error_types (of the layer judgement), and ``correction`` — ``user``'s
    current correction for this type (a :class:`CurrentCorrection`) or None.
    """
    from ..layers import parse_layer
    from ..store.correction_queries import layer_queue
    from ..store.projects import project_id, system_id
    layer = parse_layer(layer)
    etype = taxonomy().get(error_type)
    if not etype.correctable:
        raise InputError(f"captions of type {etype.name!r} are not corrected")
    with store.read() as conn:
        system_id(conn, project_id(conn, project), system)  # NotFound for an unknown project or system
    carried = layer_types(store, project, system, layer)
    with store.read() as conn:
        rows = layer_queue(conn, project_id(conn, project), system, error_type, carried, corrector=user)
    from .span_rule import layer_spans
    marked = layer_spans(store, project, system, layer, error_type) if rows else {}
    return [QueueEntry(**{**r, "correction": None if r["correction"] is None else CurrentCorrection(**r["correction"]),
                          "spans": marked.get(r["caption_id"], ())})
            for r in rows]


def state_version(store, project: str) -> tuple:
    """A cheap fingerprint of a project's judgements and corrections: it changes with every save of either,
    so queues and live scores can be cached until it moves."""
    from ..store.analysis_queries import data_version
    return (*data_version(store, project), *corrections_version(store, project))


def require_system(store, project: str, system: str) -> None:
    """Raise NotFound unless the project has this system."""
    from ..store.projects import project_id, system_id
    with store.read() as conn:
        try:
            system_id(conn, project_id(conn, project), system)
        except NotFound:
            raise NotFound(f"project {project!r} has no system called {system!r}") from None


def correction_layers(store, project: str, system: str | None = None) -> dict:
    """The judgement layers a project (or one of its systems) has for correcting: annotator names with
    current annotations, and whether the adjudicated layer holds anything.
    ``{"annotators": [...], "adjudicated": bool}``."""
    from ..store.correction_queries import layer_choices
    from ..store.projects import project_id
    with store.read() as conn:
        return layer_choices(conn, project_id(conn, project), system)


def corrections_version(store, project: str) -> tuple:
    """(count, newest id) of a project's correction revisions: it moves with every correction saved."""
    from ..store.correction_queries import corrections_fingerprint
    from ..store.projects import project_id
    with store.read() as conn:
        return corrections_fingerprint(conn, project_id(conn, project))


def caption_in_context(store, caption_id: int) -> dict:
    """The caption and the item behind it as it is stored now: caption_id, text, line_no, item_id, item_key,
    image, image_root, trusted_image_root, width, height, boxes, system (NotFound when the id holds none)."""
    from ..store.correction_queries import caption_context
    with store.read() as conn:
        return caption_context(conn, caption_id)


def item_reference_texts(store, item_id: int) -> list[str]:
    """The reference descriptions of one item, in order."""
    from ..store.correction_queries import item_references
    with store.read() as conn:
        return item_references(conn, item_id)


def default_layer(store, project: str, system: str):
    """The judgement layer whose tags decide which corrections count when none is named.

    Adjudicated when a lead adjudicated a caption of ``system``; else the one annotator's layer; None when
    nobody judged the system's captions (then every stored correction counts). With several annotators
    and no adjudication there is no safe default: InputError asking for a layer.
    """
    from ..layers import ADJUDICATED, Layer
    from ..store.correction_queries import has_adjudications
    from ..store.projects import project_id
    choices = correction_layers(store, project, system)
    with store.read() as conn:
        adjudicated = has_adjudications(conn, project_id(conn, project), system)
    if adjudicated:
        return ADJUDICATED
    names = choices["annotators"]
    if not names:
        return None
    if len(names) == 1:
        return Layer.annotator(names[0])
    raise InputError(f"{len(names)} annotators judged system {system!r} ({', '.join(names)}) and nobody adjudicated: "
                     "choose whose judgements decide which corrections count (--layer adjudicated, consensus or "
                     "annotator:NAME)")


def untagged_reason(conn, caption_ids: list[int], error_type: str) -> dict[int, str]:
    """For the captions among ``caption_ids`` (of one system) that nobody's judgement tags with
    ``error_type``: why a correction of them needs a reason (caption_id → sentence). Empty when nobody
    judged any caption of the system: then every caption may be corrected."""
    from ..store.correction_queries import system_judged, tagged_types
    if not caption_ids or not system_judged(conn, caption_ids[0]):
        return {}
    tags = tagged_types(conn, caption_ids)
    name = taxonomy().get(error_type).name
    return {cid: (f"no judgement of this caption carries {name}; the study corrects only captions annotated "
                  "with the type")
            for cid in caption_ids if error_type not in tags.get(cid, ())}
