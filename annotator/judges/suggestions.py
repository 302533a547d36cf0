"""Suggestions: the annotate panel pre-filled from a judge, only where that cannot bias what is measured.

A lead chooses a judge for a project (the project setting ``judge_suggestions``; ``annotator judge suggestions``
or the Judges page). The annotate panel of a caption then opens with that judge's label, the types it gives
(probability 0.5 or more) and their spans, for a *first* annotator who has not judged the caption yet. Never:

* for the second annotator of a double-annotated caption (the blind sample whose agreement is measured);
* for practice items (guideline examples, whose answers a lead chose);
* in blind correction: a corrector whose views a lead closed sees no judge (the judge may have read the
  references), and the Correction page shows a judge's fix only while blind correction is off;
* on Adjudication, which never reads judges.

Each judgement records whether its panel opened with a suggestion (``judgements.suggested``), so the Agreement
and Judges pages can set human–judge agreement and seconds per caption with a suggestion beside those without.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..accounts.access import LEADS, require_role
from ..model import Role

#: The project setting that names the judge suggestions come from (absent: no suggestions).
SETTING = "judge_suggestions"


@dataclass(frozen=True)
class Suggestion:
    """What the panel starts from: the judge's label, its types and their spans."""

    judge: str
    label: str  # "accurate" or "inaccurate"
    error_types: tuple[str, ...]
    spans: tuple
    p_inaccurate: float


def suggestion_judge(store, project: str) -> str | None:
    """The judge a project's suggestions come from, or None when they are off."""
    from ..store.project_settings import get_setting
    from ..store.projects import project_id
    with store.read() as conn:
        return get_setting(conn, project_id(conn, project), SETTING) or None


def set_suggestion_judge(store, project: str, judge: str | None, *, actor_role: Role | str = Role.ADMIN) -> str | None:
    """Pre-fill the annotate panel from ``judge`` (a judge of the project) or, with None, stop (lead/admin only)."""
    from ..store.project_settings import set_setting
    from ..store.projects import project_id
    from . import judge_names
    require_role(actor_role, LEADS, "choosing the judge that pre-fills the annotate panel")
    if judge is not None:
        names = judge_names(store, project)
        if judge not in names:
            from ..errors import NotFound
            raise NotFound(f"no judge called {judge!r} in project {project!r}; judges: {', '.join(names)}")
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), SETTING, judge or "")
    return judge


def suggestion_of(store, project: str, caption_id: int, judge: str) -> Suggestion | None:
    """``judge``'s suggestion for one caption (None when it has no output for it)."""
    from ..spans import merge_spans
    from .outputs import DETECTORS, JudgeOutput
    if judge == DETECTORS:
        out = _detector_output(store, caption_id)
    else:
        from ..store.judges import judge_output_of
        from ..store.projects import project_id
        with store.read() as conn:
            row = judge_output_of(conn, project_id(conn, project), judge, caption_id)
        out = None if row is None else JudgeOutput.from_row(row)
    if out is None:
        return None
    types = out.flagged() if out.inaccurate else ()
    spans = merge_spans([s for s in out.spans if s.type in types])
    return Suggestion(judge, "inaccurate" if types else "accurate", types, spans, out.p_inaccurate)


def _detector_output(store, caption_id: int):
    """The detectors' output for one caption, from its item's evidence."""
    from ..estimate.detectors import detect, evidence_of_item
    from ..estimate.project import SystemCaptions
    from ..store.tasks import caption_context
    from .outputs import DetectorJudge
    import numpy as np
    with store.read() as conn:
        ctx = caption_context(conn, caption_id)
    det = detect([ctx.caption.text], [0], [evidence_of_item(ctx.item)])
    sc = SystemCaptions(ctx.caption.system, np.array([caption_id]), det, 0)
    return DetectorJudge().outputs_for(sc, {caption_id: ctx.caption.text})[caption_id]


def withheld(*, is_second: bool, is_practice: bool, views_closed: bool) -> str | None:
    """Why a caption's panel must not start from a judge (None: it may). See the module for the rules."""
    if is_second:
        return "second annotator of a double-annotated caption"
    if is_practice:
        return "practice item"
    if views_closed:
        return "blind correction"
    return None


def judge_fixes(store, project: str, caption_id: int, error_type: str, *, references_shown: bool
                ) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The suggesting judge's fixes of one error type on a caption, for the Correction page: (judge, ((the words,
    the fix), …)), or None. None in blind correction, that is while the page hides the caption's references (a
    judge may have read them), and when the project has no suggestions or the judge gave no fix of that type."""
    from ..spans import caption_tokens
    if not references_shown:
        return None
    judge = suggestion_judge(store, project)
    if judge is None:
        return None
    found = suggestion_of(store, project, caption_id, judge)
    if found is None or error_type not in found.error_types:
        return None
    from ..store.tasks import caption_context
    with store.read() as conn:
        words = caption_tokens(caption_context(conn, caption_id).caption.text)
    fixes = tuple((" ".join(words[s.start:s.end]), s.fix) for s in found.spans if s.type == error_type and s.fix)
    return (judge, fixes) if fixes else None
