"""Saving corrections beside the generated captions, and reading their history back."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import InputError
from ..limits import check_text_length
from ..taxonomy import taxonomy
from .blind import blind_label
from .diff import diff_text
from .guards import GuardReport, check_correction, enforce
from .queues import untagged_reason


@dataclass(frozen=True)
class SavedCorrection:
    """What a save stored."""

    caption_id: int
    error_type: str
    user: str
    revision: int
    corrected_text: str | None
    override_reason: str | None
    report: GuardReport | None


def correct_caption(store, caption_id: int, error_type: str, user: str, corrected_text: str | None, *,
                    override_reason: str | None = None, max_changed_words: int | None = None,
                    create_role=None, stamp=None, blind: bool | None = None, layer=None,
                    spans=None) -> SavedCorrection:
    """Check and store one correction of a caption for one error type, beside the original.

    ``corrected_text=None`` (or text identical to the original) records the
    deliberate decision to leave the caption untouched. A guard violation
    raises GuardViolation unless ``override_reason`` is given; so does a
    correction of a caption that no judgement tags with ``error_type`` (when
    the system's captions are judged at all). Each save
    appends a revision; earlier ones stay in the history. ``create_role``
    creates a password-less account for ``user`` if it does not exist (the
    app's local mode). ``stamp`` (annotator.store.stamps.CaptionStamp of the
    caption as the page showed it) refuses the save with CaptionChanged,
    storing nothing, when the id holds another caption by now. ``blind``
    records whether the references and live scores were hidden while the
    correction was made (the Correction page passes its mode; None: not known).
    When the caption has error spans of ``error_type`` (``spans`` as the page showed them, else those of
    ``layer``, else of every current judgement of the caption), the guard's rule is the span rule
    (annotator.correction.span_rule): only the marked words, and the words that agree with them, may change.
    """
    from ..store.correction_queries import caption_text
    from ..store.corrections import insert_correction
    from ..store.users import user_id

    taxonomy().get(error_type)
    from ..store.stamps import check_caption_stamp
    with store.read() as conn:
        if stamp is not None:  # before the rule checks, which would judge the edit against another caption
            check_caption_stamp(conn, stamp, caption_id)
        original = caption_text(conn, caption_id)
    report = None
    reason = None
    if corrected_text is not None:
        if not corrected_text.strip():
            raise InputError("the corrected caption is empty; use 'leave untouched' to keep the original")
        corrected_text = check_text_length(corrected_text.strip(), "caption", named="the corrected caption")
        if corrected_text == original:
            corrected_text = None
    if corrected_text is not None:
        if spans is None:
            from .span_rule import caption_spans
            spans = caption_spans(store, caption_id, error_type, layer)
        report = check_correction(error_type, original, corrected_text, max_changed_words=max_changed_words,
                                  spans=spans)
        with store.read() as conn:
            untagged = untagged_reason(conn, [caption_id], error_type).get(caption_id)
        if untagged:
            report = replace(report, violations=report.violations + (untagged,))
        reason = enforce(report, override_reason)
    elif not taxonomy().get(error_type).correctable:
        raise InputError(f"captions of type {error_type!r} are not corrected")
    from sqlalchemy.exc import IntegrityError
    for attempt in range(8):
        try:
            with store.transaction() as conn:
                uid = user_id(conn, user, create_role=create_role)
                revision = insert_correction(conn, caption_id, error_type, uid, original_text=original,
                                             corrected_text=corrected_text, override_reason=reason, stamp=stamp,
                                             blind=blind)
            break
        except IntegrityError:
            if attempt == 7:
                raise
    return SavedCorrection(caption_id, error_type, user, revision, corrected_text, reason, report)


def leave_untouched(store, caption_id: int, error_type: str, user: str, *, create_role=None,
                    stamp=None, blind: bool | None = None) -> SavedCorrection:
    """Record that ``user`` deliberately left the caption as generated for ``error_type`` (``stamp``,
    ``blind``: as in :func:`correct_caption`)."""
    return correct_caption(store, caption_id, error_type, user, None, create_role=create_role, stamp=stamp,
                           blind=blind)


def caption_corrections(store, caption_id: int, error_type: str | None = None) -> list:
    """Every stored revision of a caption's corrections (oldest first)."""
    from ..store.corrections import correction_history
    with store.read() as conn:
        return correction_history(conn, caption_id, error_type)


def corrections_table(store, project: str, *, system: str | None = None, error_type: str | None = None,
                      with_diff: bool = True):
    """Current corrections of a project as a DataFrame for listing and export.

    Columns: system, line_no, item_key, error_type, user, revision,
    original_text, corrected_text, untouched, override_reason, mode (blind,
    references shown or not recorded: see :mod:`annotator.correction.blind`)
    and (with ``with_diff``) a plain-text word diff.
    """
    from ..store.corrections import current_corrections_frame
    if error_type is not None:
        taxonomy().get(error_type)
    df = current_corrections_frame(store, project, error_type=error_type, system=system)
    if df.empty:
        cols = ["system", "line_no", "item_key", "error_type", "user", "revision", "original_text", "corrected_text",
                "untouched", "override_reason", "mode"] + (["diff"] if with_diff else [])
        import pandas as pd
        return pd.DataFrame(columns=cols)
    df = df.copy()
    df["untouched"] = df["corrected_text"].isna()
    df["corrected_text"] = df["corrected_text"].astype(object).where(~df["untouched"], None)
    df["override_reason"] = df["override_reason"].astype(object).where(df["override_reason"].notna(), None)
    df["mode"] = [blind_label(None if b is None or b != b else bool(b)) for b in df["blind"]]
    if with_diff:
        df["diff"] = [diff_text(o, c) if c is not None else "" for o, c in zip(df["original_text"], df["corrected_text"])]
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    df["_o"] = df["error_type"].map(order)
    df = df.sort_values(["system", "line_no", "_o", "user"]).drop(columns=["_o", "caption_id", "blind"])
    cols = ["system", "line_no", "item_key", "error_type", "user", "revision", "original_text", "corrected_text",
            "untouched", "override_reason", "mode"] + (["diff"] if with_diff else [])
    return df[cols].reset_index(drop=True)
