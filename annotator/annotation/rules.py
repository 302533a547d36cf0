"""The annotation rules: what a judgement and a draft must be (:func:`validate`, :func:`check_draft`), the
"Generally unrelated" reminder, detector hints, and the annotate page's keys."""

from __future__ import annotations

from ..errors import InputError
from ..limits import TEXT_LIMITS, check_free_text
from ..model import Label
from ..taxonomy import Taxonomy, taxonomy


STAGE_FULL = "full"      # both tasks at once
STAGE_COARSE = "coarse"  # staged second pass: accurate / inaccurate only
STAGE_FINE = "fine"      # staged second pass: error types of a caption both found inaccurate
MAX_NOTE_LENGTH = TEXT_LIMITS["note"]  # the one limit of a note (annotator.limits), on every path


# --------------------------------------------------------------------------- rules

def _parse_label(label: Label | str) -> Label:
    """``label`` as a Label; InputError naming it when it is none of them."""
    try:
        return Label(label)
    except ValueError:
        raise InputError(f"unknown label {label!r}") from None


def _check_note(note: str) -> None:
    """The rule every note follows (judgements, skips, adjudications, drafts, as the importers do): at most
    MAX_NOTE_LENGTH characters, tabs and line breaks but no other control character."""
    check_free_text(note, "note")


def validate(label: Label | str | None, error_types=(), *, note: str = "", stage: str = STAGE_FULL,
             tax: Taxonomy | None = None) -> tuple[str, ...]:
    """Check a judgement against the annotation rules; return its types in taxonomy order.

    Raises InputError with a message meant for the annotator.
    """
    tax = tax or taxonomy()
    if label is None or label == "":
        raise InputError("choose Accurate or Inaccurate first")
    label = _parse_label(label)
    types = tax.validate_ids(error_types or ())
    _check_note(note or "")
    if label is Label.ACCURATE:
        if types:
            raise InputError("an accurate caption has no error types; untick them or choose Inaccurate")
        return ()
    if stage == STAGE_COARSE:
        if types:
            raise InputError("this caption only needs the accurate/inaccurate judgement for now; "
                             "error types are asked later if both annotators find it inaccurate")
        return ()
    if not types:
        raise InputError("an inaccurate caption needs at least one error type")
    if "other" in types and not (note or "").strip():
        raise InputError("describe the 'Other' error in the note")
    return types


def unrelated_hint(error_types, tax: Taxonomy | None = None) -> str | None:
    """A gentle reminder that "Generally unrelated" exists, or None when there is nothing to say.

    The error-analysis guideline fixes no number of errors at which a caption becomes generally
    unrelated: it calls that usually the case beyond two or three types, leaves the call to the
    annotator, and counts clothing mistakes as lighter than a wrong verb; its Table 1 and Figure 1
    hold captions with three and four errors. So this rule never decides anything: it returns a
    hint only when more than ``tax.unrelated_hint_above`` types other than "Generally unrelated"
    are ticked (guidelines/taxonomy.toml, 3: the upper end of "two or three"; 0 switches the hint
    off), and none once "Generally unrelated" is ticked. The text names the judgement call.
    """
    tax = tax or taxonomy()
    chosen = set(error_types or ())
    others = len(chosen - {"unrelated"})
    if "unrelated" in chosen or not tax.unrelated_hint_above or others <= tax.unrelated_hint_above:
        return None
    return unrelated_hint_text(others)


def unrelated_hint_text(count: int | str) -> str:
    """The words of the "Generally unrelated" reminder for ``count`` ticked types (:func:`unrelated_hint`
    decides when it is due; the annotate page fills the count in as types are ticked)."""
    return (f"{count} error types ticked. That is right when each is a separate fix of a caption that still "
            "describes this picture. If it is beyond repair instead, Generally unrelated on its own may fit better. "
            "The study's rule of thumb: usually generally unrelated when more than two or three types apply. "
            "There is no fixed number: it is your judgement, and wrong clothing weighs less than a wrong subject "
            "or activity.")


def detector_hints(caption: str, item, *, enabled: bool = False, blind: bool = False,
                   tax: Taxonomy | None = None) -> dict[str, tuple[str, ...]]:
    """Optional hints for one caption: ``{type id: words the detector flagged}`` in taxonomy order, from the
    automatic detectors (annotator.estimate.detectors) run on the caption against its item's references and
    box labels.

    Empty when ``enabled`` is false (hints are off unless the annotator asks for them) and whenever
    ``blind`` is true (the caption is in the blind double-annotation sample: a hint there could steer both
    annotators the same way and inflate their agreement). A hint is a pointer, never a judgement.
    """
    if not enabled or blind:
        return {}
    from ..estimate.detectors import detect, evidence_of_item
    tax = tax or taxonomy()
    found = detect([caption], [0], [evidence_of_item(item)]).triggers(0)
    return {t: tuple(found[t]) for t in tax.ids if found.get(t)}


#: Page keys besides the taxonomy's: they must not collide with a type's key.
PAGE_KEYS = {"k": "skip", "h": "boxes", "t": "references", "m": "zoom", "l": "list", "/": "note", "?": "help"}


def keyboard_map(tax: Taxonomy | None = None) -> dict[str, str]:
    """Key → action: ``accurate``, ``inaccurate``, ``type:<id>`` (from the taxonomy), ``skip``,
    ``boxes``, ``references``, ``zoom`` (magnify the picture), ``list`` (the caption list), ``note`` (focus the note), ``help`` (the guide
    overlay). InputError when a taxonomy key collides with a page key."""
    tax = tax or taxonomy()
    keys = dict(PAGE_KEYS)
    for key, action in [(tax.accurate_key, "accurate"), (tax.inaccurate_key, "inaccurate"),
                        *((t.key, f"type:{t.id}") for t in tax.types)]:
        if key in keys:
            raise InputError(f"keyboard key {key!r} of {action!r} is taken by {keys[key]!r}", "guidelines/taxonomy.toml")
        keys[key] = action
    return keys


def check_draft(label: Label | str | None, error_types=(), note: str = "", *,
                tax: Taxonomy | None = None) -> tuple[str | None, tuple[str, ...], str]:
    """A draft's fields as they are stored: (label value or None, types in taxonomy order, note).

    The checks of a note and of type ids apply (known types only, at most MAX_NOTE_LENGTH characters, no
    control characters but tab and line breaks); the rules of a finished judgement (:func:`validate`) do
    not, so a draft may lack a choice or an inaccurate one its types. InputError otherwise.
    """
    tax = tax or taxonomy()
    label = None if label is None or label == "" else _parse_label(label).value
    types = tax.validate_ids(error_types or ())
    if not isinstance(note, str):
        raise InputError(f"the note must be text, got {type(note).__name__}")
    _check_note(note)
    return label, tuple(types), note.strip()
