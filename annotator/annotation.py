"""The annotation workflow without a user interface: rules, queue, save and next.

The annotate page is a thin shell around :class:`Queue`::

    q = Queue.open(store, user, role, project)
    pos = q.first_todo()                   # where a new session starts
    task = q.task(pos)                     # caption, item, boxes, references, own judgement
    q.save(task, label, types, note, seconds)   # one committed revision
    pos = q.next_todo(after=pos)

Drafts: ``q.save_draft(task, label, types, note)`` stores the panel as it is,
unfinished (one draft per user and caption, in the database), and
``q.load_draft(task)`` gives it back when the caption is shown again, unless
a judgement saved since supersedes it. Saving or skipping the caption removes
the draft.

Rules (:func:`validate`): a coarse label is required; *inaccurate* needs at
least one error type, *accurate* has none; in the coarse stage of a staged
second pass no types are given; "Other" needs a note saying what it is.
:func:`unrelated_hint` gives the reminder shown when many types are ticked
that "Generally unrelated" is an option (a hint, never a rule).

What comes next: captions never seen, in queue order, starting after the
current one and wrapping round; then captions waiting for their fine pass;
then skipped ones. A skip is stored as a revision without a label, so the
time spent and the fact are kept, and the caption comes back at the end.

Privacy: a queue only ever reads its own user's judgements. Reading someone
else's goes through :func:`judgements_of` / :func:`judgement_history`, which
refuse annotators.
"""

from __future__ import annotations

import threading
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .access import REVIEW, require_role
from .errors import InputError, NotFound, PermissionDenied
from .model import Item, Judgement, JudgementKind, Label, Role
from .names import text_problem
from .taxonomy import GUIDELINES_DIR, Taxonomy, taxonomy

STAGE_FULL = "full"      # both tasks at once
STAGE_COARSE = "coarse"  # staged second pass: accurate / inaccurate only
STAGE_FINE = "fine"      # staged second pass: error types of a caption both found inaccurate
MAX_NOTE_LENGTH = 2000


# --------------------------------------------------------------------------- rules

def _parse_label(label: Label | str) -> Label:
    """``label`` as a Label; InputError naming it when it is none of them."""
    try:
        return Label(label)
    except ValueError:
        raise InputError(f"unknown label {label!r}") from None


def _check_note(note: str) -> None:
    """The rule every note follows (judgements, adjudications, drafts, as the importers do): at most
    MAX_NOTE_LENGTH characters, tabs and line breaks but no other control character."""
    if len(note) > MAX_NOTE_LENGTH:
        raise InputError(f"the note is longer than {MAX_NOTE_LENGTH} characters")
    problem = text_problem(note)
    if problem:
        raise InputError(f"the note cannot contain {problem}")


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
    from .estimate.detectors import detect, evidence_of_item
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


# --------------------------------------------------------------------------- queue

@dataclass(frozen=True)
class Progress:
    """How far a user is in a project: ``done`` of ``assigned`` (fine passes still open count as not done)."""

    done: int
    assigned: int
    fine_waiting: int = 0

    @property
    def fraction(self) -> float:
        """done / assigned (1.0 for an empty queue)."""
        return self.done / self.assigned if self.assigned else 1.0


@dataclass(frozen=True)
class Task:
    """Everything the annotate page shows for one position of a queue.

    ``current`` is the user's own latest judgement (never anyone else's).
    """

    position: int
    caption_id: int
    is_second: bool
    stage: str
    context: object  # annotator.store.tasks.CaptionContext
    current: Judgement | None

    @property
    def item(self):
        """The item (image, boxes, references)."""
        return self.context.item

    @property
    def caption(self):
        """The generated caption being judged."""
        return self.context.caption

    @property
    def image_root(self) -> str | None:
        """The project's image root."""
        return self.context.image_root

    @property
    def trusted_image_root(self) -> str | None:
        """The image root as a command-line import set it (see annotator.images.check_image_root)."""
        return getattr(self.context, "trusted_image_root", None)

    @property
    def stamp(self):
        """The caption as this task read it (annotator.store.stamps.CaptionStamp): saves of the task carry it,
        so they are refused if a restore or a new import put another caption under the same id meanwhile."""
        return getattr(self.context, "stamp", None)


@dataclass(frozen=True)
class SaveResult:
    """What a save stored."""

    caption_id: int
    revision: int
    label: str | None
    error_types: tuple[str, ...]
    was_done: bool  # the caption counted as done before this save


@dataclass(frozen=True)
class Draft:
    """An unfinished judgement as the annotator left it with "Save draft": perhaps no choice yet, perhaps
    inaccurate without types. ``saved_at`` is UTC."""

    caption_id: int
    label: str | None
    error_types: tuple[str, ...]
    note: str
    saved_at: datetime


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


@dataclass(frozen=True)
class Queue:
    """One user's queue in one project. Cheap to build; holds ids only."""

    store: object
    user: str
    role: Role
    project: str
    user_id: int
    project_id: int
    second_pass: str
    has_second: bool

    @classmethod
    def open(cls, store, user: str, role: Role | str, project: str, *, create_user: bool = False) -> "Queue":
        """The queue of ``user`` in ``project`` (NotFound if either is unknown).

        ``create_user`` makes a password-less account row for a user that has
        none yet (the local user of single-user mode).
        """
        from .assignment import DEFAULT_SECOND_PASS, SECOND_PASS_KEY
        from .store.assignments import has_second_assignments
        from .store.project_settings import get_setting
        from .store.projects import project_id
        from .store.users import user_id
        role = Role(role)
        if create_user:
            from .auth import ensure_user_id
            uid = ensure_user_id(store, user, role)
        with store.read() as conn:
            pid = project_id(conn, project)
            if not create_user:
                uid = user_id(conn, user)
            mode = get_setting(conn, pid, SECOND_PASS_KEY, DEFAULT_SECOND_PASS)
            has_second = has_second_assignments(conn, uid, pid)
        return cls(store, user, role, project, uid, pid, mode, has_second)

    @property
    def staged(self) -> bool:
        """True when this user has second-annotator captions under a staged second pass."""
        return self.has_second and self.second_pass == "staged"

    # -- where am I --------------------------------------------------------

    def progress(self) -> Progress:
        """Done / assigned for this queue."""
        from .store.assignments import fine_pass_ready, queue_counts
        with self.store.read() as conn:
            assigned, labelled, _ = queue_counts(conn, self.user_id, self.project_id)
            waiting = len(fine_pass_ready(conn, self.user_id, self.project_id)) if self.staged else 0
        return Progress(labelled - waiting, assigned, waiting)

    def size(self) -> int:
        """Number of captions in the queue."""
        from .store.assignments import queue_size
        with self.store.read() as conn:
            return queue_size(conn, self.user_id, self.project_id)

    def first_todo(self) -> int | None:
        """Where a new session starts: the first caption still to do (None when all are done)."""
        return self.next_todo(after=-1)

    def next_todo(self, after: int = -1) -> int | None:
        """The next position to work on after ``after`` (see the module docstring for the order)."""
        from .store.assignments import fine_pass_ready, first_skipped, first_unseen
        with self.store.read() as conn:
            uid, pid = self.user_id, self.project_id
            pos = first_unseen(conn, uid, pid, after)
            if pos is None and after >= 0:
                pos = first_unseen(conn, uid, pid, -1)
            if pos is not None:
                return pos
            if self.staged:
                ready = fine_pass_ready(conn, uid, pid)
                if ready:
                    return next((p for p in ready if p > after), ready[0])
            pos = first_skipped(conn, uid, pid, after)
            if pos is None and after >= 0:
                pos = first_skipped(conn, uid, pid, -1)
            return pos

    def neighbour(self, position: int, step: int) -> int | None:
        """The previous (step=-1) or next (step=+1) position in queue order, or None."""
        from .store.assignments import neighbour_position
        with self.store.read() as conn:
            return neighbour_position(conn, self.user_id, self.project_id, position, step)

    # -- one caption -------------------------------------------------------

    def task(self, position: int) -> Task:
        """The task at ``position`` (NotFound if the queue has no such position)."""
        from .store.assignments import assignment_at, first_annotator_label
        from .store.judgements import current_judgement
        from .store.tasks import caption_context
        with self.store.read() as conn:
            row = assignment_at(conn, self.user_id, self.project_id, position)
            if row is None:
                raise NotFound(f"{self.user!r} has no caption at position {position} of project {self.project!r}")
            ctx = caption_context(conn, row.caption_id)
            current = current_judgement(conn, row.caption_id, self.user_id)
            stage = STAGE_FULL
            if self.second_pass == "staged" and row.is_second and not ctx.item.is_practice:
                stage = STAGE_COARSE
                if current is not None and current.label is Label.INACCURATE:
                    if current.error_types or first_annotator_label(conn, row.caption_id, self.user_id) == "inaccurate":
                        stage = STAGE_FINE
        return Task(position=row.position, caption_id=row.caption_id, is_second=bool(row.is_second), stage=stage,
                    context=ctx, current=current)

    def save(self, task: Task, label: Label | str | None, error_types=(), note: str = "", seconds: float = 0.0) -> SaveResult:
        """Validate and store one revision of the user's judgement of ``task`` (committed on return).

        CaptionChanged (nothing stored) when the task's caption id holds another caption by now."""
        from .store.judgements import save_judgement
        types = validate(label, error_types, note=note, stage=task.stage)
        label = Label(label)
        self._check_assigned(task.caption_id, task.stamp)
        revision = save_judgement(self.store, task.caption_id, self.user_id, label=label, error_types=types,
                                  note=(note or "").strip(), seconds=max(0.0, float(seconds or 0.0)),
                                  kind=JudgementKind.ANNOTATION, stamp=task.stamp)
        return SaveResult(task.caption_id, revision, label.value, types, _is_done(task))

    def skip(self, task: Task, note: str = "", seconds: float = 0.0) -> SaveResult | None:
        """Put a caption aside for later: stored as a revision without label, unless it is judged already
        (then nothing is written, so a skip never erases a judgement)."""
        from .store.judgements import save_judgement
        if task.current is not None and task.current.label is not None:
            self.discard_draft(task)
            return None
        self._check_assigned(task.caption_id, task.stamp)
        revision = save_judgement(self.store, task.caption_id, self.user_id, label=None, error_types=(),
                                  note=(note or "").strip()[:MAX_NOTE_LENGTH], seconds=max(0.0, float(seconds or 0.0)),
                                  stamp=task.stamp)
        return SaveResult(task.caption_id, revision, None, (), False)

    # -- drafts -------------------------------------------------------------

    def save_draft(self, task: Task, label: Label | str | None = None, error_types=(), note: str = "") -> Draft:
        """Store the panel as it is as this user's draft of ``task`` (committed on return), replacing any
        earlier draft of the caption. Checked by :func:`check_draft`, not :func:`validate`: a draft may be
        incomplete. PermissionDenied for a caption not in this queue."""
        from .store.drafts import put_draft
        label, types, note = check_draft(label, error_types, note)
        self._check_assigned(task.caption_id, task.stamp)
        with self.store.transaction() as conn:
            at = put_draft(conn, task.caption_id, self.user_id, label=label, error_types=types, note=note)
        return Draft(task.caption_id, label, types, note, at)

    def load_draft(self, task: Task) -> Draft | None:
        """This user's draft of ``task``, or None when there is none or a judgement saved after it (an
        import, another tab) supersedes it."""
        from .store.drafts import get_draft
        with self.store.read() as conn:
            row = get_draft(conn, task.caption_id, self.user_id)
        if row is None:
            return None
        label, types, note, saved_at = row
        cur = task.current
        if cur is not None and cur.created_at is not None and _utc(cur.created_at) >= saved_at:
            return None
        return Draft(task.caption_id, label, types, note, saved_at)

    def discard_draft(self, task: Task) -> bool:
        """Remove this user's draft of ``task``; True when there was one."""
        from .store.drafts import delete_draft
        with self.store.transaction() as conn:
            return bool(delete_draft(conn, task.caption_id, self.user_id))

    # -- detector hints -------------------------------------------------------

    def in_double_sample(self, task: Task) -> bool:
        """True when the task's caption is in the blind double-annotation sample (for either annotator)."""
        from .store.assignments import in_double_sample
        if task.is_second:
            return True
        with self.store.read() as conn:
            return in_double_sample(conn, task.caption_id)

    def hints(self, task: Task, enabled: bool = False) -> dict[str, tuple[str, ...]]:
        """The detector hints for ``task`` (see :func:`detector_hints`): nothing unless ``enabled``, and
        nothing ever for a caption of the blind double-annotation sample, whatever ``enabled`` says."""
        if not enabled:
            return {}
        return detector_hints(task.caption.text, task.item, enabled=True, blind=self.in_double_sample(task))

    # -- the caption list ---------------------------------------------------

    def listing(self, status: str = "all", *, offset: int = 0, limit: int = 50) -> list["QueueEntry"]:
        """One page of this queue in queue order, filtered by ``status`` (a key of :data:`CAPTION_FILTERS`;
        InputError for another). Reads only this user's own judgements."""
        from .store.assignments import queue_listing
        _check_filter(status)
        with self.store.read() as conn:
            rows = queue_listing(conn, self.user_id, self.project_id, status, offset=max(0, int(offset)),
                                 limit=max(1, int(limit)))
        return [QueueEntry(r.position, r.caption_id, r.item_key, r.text,
                           ("to do" if not r.seen else "skipped" if r.label is None else r.label),
                           tuple((r.error_types or "").split()), r.note or "", r.revision) for r in rows]

    def listing_count(self, status: str = "all") -> int:
        """How many captions of this queue pass ``status`` (see :meth:`listing`)."""
        from .store.assignments import queue_listing_count
        _check_filter(status)
        with self.store.read() as conn:
            return queue_listing_count(conn, self.user_id, self.project_id, status)

    def listing_counts(self) -> dict[str, int]:
        """:meth:`listing_count` of every filter of :data:`CAPTION_FILTERS` at once (one pass over the queue)."""
        from .store.assignments import queue_listing_counts
        with self.store.read() as conn:
            return queue_listing_counts(conn, self.user_id, self.project_id)

    def position_of(self, number: int) -> int | None:
        """The position of caption ``number`` as the page counts them ("Caption 3 of 40" is number 3), or None
        when the queue has no such caption."""
        from .store.assignments import assignment_at
        try:
            position = int(number) - 1
        except (TypeError, ValueError):
            return None
        if position < 0:
            return None
        with self.store.read() as conn:
            row = assignment_at(conn, self.user_id, self.project_id, position)
        return None if row is None else row.position

    def history(self, caption_id: int) -> list[Judgement]:
        """Every revision of this user's own judgement of a caption, oldest first."""
        from .store.judgements import history
        with self.store.read() as conn:
            return history(conn, caption_id, self.user_id, "annotation")

    def _check_assigned(self, caption_id: int, stamp=None) -> None:
        from .store.assignments import assignment_of_caption
        from .store.stamps import check_caption_stamp
        with self.store.read() as conn:
            row = assignment_of_caption(conn, self.user_id, caption_id)
            if (row is None or row.project_id != self.project_id) and stamp is not None:
                # Not assigned (any more): if the caption itself was replaced, that is the news to give.
                check_caption_stamp(conn, stamp, caption_id)
        if row is None or row.project_id != self.project_id:
            raise PermissionDenied(f"caption {caption_id} is not assigned to {self.user!r} in project {self.project!r}")


#: The caption list's filters: key → what the list calls it.
CAPTION_FILTERS = {"all": "All", "todo": "To do", "skipped": "Skipped", "judged": "Judged",
                   "inaccurate": "My inaccurate", "note": "With a note"}


def _check_filter(status: str) -> None:
    if status not in CAPTION_FILTERS:
        raise InputError(f"unknown caption filter {status!r}; choose one of {', '.join(CAPTION_FILTERS)}")


@dataclass(frozen=True)
class QueueEntry:
    """One line of a user's caption list: where it is, what it says and how the user left it."""

    position: int
    caption_id: int
    item_key: str
    caption: str
    status: str                    # "to do", "skipped", "accurate" or "inaccurate"
    error_types: tuple[str, ...]   # taxonomy ids, taxonomy order
    note: str
    revision: int | None           # the user's current revision (None: never saved)

    @property
    def number(self) -> int:
        """The caption's number as the page shows it (position + 1)."""
        return self.position + 1


def _utc(at: datetime) -> datetime:
    from datetime import timezone
    return at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at


def _is_done(task: Task) -> bool:
    cur = task.current
    if cur is None or cur.label is None:
        return False
    return not (task.stage == STAGE_FINE and not cur.error_types)


# --------------------------------------------------------------------------- images

def _item_jpeg(root, image, boxes: tuple, width, height, show_boxes: bool,
               trusted_root: str | None = None, show_labels: bool = True) -> tuple[bytes, str | None]:
    # JPEG instead of PNG: a tenth of the bytes for a photo, so the next item appears sooner. The render is
    # cached in annotator.images per file and modification time, so a photo replaced on disk is drawn anew.
    from .images import render_boxes_bytes
    hidden = () if show_boxes else tuple(b.box_id for b in boxes)
    size = {"width": width, "height": height, "hidden": hidden, "image_format": "JPEG", "show_labels": show_labels}
    try:
        return render_boxes_bytes(root, image, list(boxes), trusted_root=trusted_root, **size), None
    except InputError as exc:
        # A root images may not be read from, a path leaving the root, or no root at all: keep the boxes
        # usable on a blank canvas.
        return render_boxes_bytes(None, None, list(boxes), **size), f"The photo cannot be shown: {exc.detail}."


def task_image(task: Task, show_boxes: bool = True) -> tuple[bytes, str | None]:
    """JPEG bytes of the task's image with its gold boxes (cached), and a note when the photo
    itself cannot be used (the boxes are then drawn on a blank canvas). When the item's size is known
    the boxes' labels are not drawn into the picture: the page sets them over it as text
    (annotator.images.place_labels, :func:`labels_as_text`), legible at whatever size it is shown."""
    item = task.item
    return _item_jpeg(task.image_root, item.image, tuple(item.boxes), item.width, item.height, bool(show_boxes),
                      task.trusted_image_root, show_labels=not labels_as_text(task))


@dataclass(frozen=True)
class CaptionPicture:
    """A caption's item and its picture as the annotate page shows it (see :func:`caption_picture`)."""

    item: Item
    jpeg: bytes
    note: str | None
    labels_as_text: bool


def caption_picture(store, caption_id: int) -> CaptionPicture:
    """Caption ``caption_id``'s item (boxes, references with mentions) and its picture as Annotate shows it:
    plain, with the boxes to be set over it as text when the item's size is known, else with the boxes (and
    their labels) drawn in. ``note`` says why the photo itself cannot be shown, if it cannot."""
    from .store.tasks import caption_context
    with store.read() as conn:
        ctx = caption_context(conn, int(caption_id))
    item = ctx.item
    as_text = bool(item.width and item.height and item.boxes)
    jpeg, note = _item_jpeg(ctx.image_root, item.image, tuple(item.boxes), item.width, item.height, not as_text,
                            ctx.trusted_image_root, show_labels=not as_text)
    return CaptionPicture(item, jpeg, note, as_text)


def labels_as_text(task: Task) -> bool:
    """True when the page shows the box labels as text over the picture (the item's size is known, so
    the boxes can be placed as fractions of it); otherwise they are drawn into the picture."""
    return bool(task.item.width and task.item.height and task.item.boxes)


def pictures_sent(task: Task) -> tuple[bool, ...]:
    """Which renders of the task's image the page sends, as ``show_boxes`` flags.

    When the page draws the boxes itself (:func:`labels_as_text`: outlines and labels over the
    picture, shown and hidden in the browser) or there are no boxes, one picture without boxes is
    enough; otherwise the picture with its boxes drawn in and the one without are both sent, so the
    boxes can still be switched off without asking the server."""
    if labels_as_text(task) or not task.item.boxes:
        return (False,)
    return (True, False)


def prefetch(queue: Queue, position: int, *, delay: float = 0.0) -> threading.Thread:
    """Render, in a background thread, the images of the captions likely to come after ``position``
    (the next one to do and the next in queue order), so "Save & next" finds them ready.

    ``delay`` (seconds) lets the current page run finish first, so the prefetch does not compete
    with it for the processor."""
    def _work():
        try:
            seen = set()
            for pos in (queue.next_todo(after=position), queue.neighbour(position, 1)):
                if pos is None or pos in seen or pos == position:
                    continue
                seen.add(pos)
                task = queue.task(pos)
                for show_boxes in pictures_sent(task):
                    task_image(task, show_boxes)
        except Exception:  # noqa: BLE001 - a failed prefetch only means a slower next item
            pass

    thread = threading.Timer(delay, _work) if delay > 0 else threading.Thread(target=_work)
    thread.name, thread.daemon = "annotator-prefetch", True
    thread.start()
    return thread


# --------------------------------------------------------------------------- reading judgements

def judgements_of(store, actor: str, actor_role: Role | str, project: str, user: str | None = None):
    """Current judgements of a project as a DataFrame (see store.judgements.current_frame).

    An annotator may read only their own (``user`` must be themselves);
    leads, analysts and admins may read anyone's.
    """
    from .store.judgements import current_frame
    if Role(actor_role) not in REVIEW:
        if user != actor:
            raise PermissionDenied("annotators can read only their own judgements")
    return current_frame(store, project, users_=[user] if user else None)


def judgement_history(store, actor: str, actor_role: Role | str, caption_id: int, user: str) -> list[Judgement]:
    """Every revision of ``user``'s judgement of a caption (annotators: only their own)."""
    from .store.judgements import history
    from .store.users import user_id
    if user != actor:
        require_role(actor_role, REVIEW, "reading another user's judgements")
    with store.read() as conn:
        return history(conn, caption_id, user_id(conn, user), "annotation")


# --------------------------------------------------------------------------- guidelines

@dataclass(frozen=True)
class ContrastExample:
    """A worked case of a contrast: the caption against the picture, and the types to tick."""

    case: str                  # "'A cat sits on a chair' — it sits on a bench"
    types: tuple[str, ...]     # the answer, in taxonomy order
    why: str = ""              # optional reason, shown after the answer

    def text(self, tax: Taxonomy | None = None) -> str:
        """The case with its answer as one line: ``case: Type and Type (why).``"""
        tax = tax or taxonomy()
        names = [tax.get(t).name for t in self.types]
        answer = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"{self.case}: {answer}" + (f" ({self.why})" if self.why else "") + "."


@dataclass(frozen=True)
class Contrast:
    """Two easily confused error types and how to tell them apart."""

    id: str
    title: str
    types: tuple[str, ...]
    rule: str
    examples: tuple[ContrastExample, ...]


@dataclass(frozen=True)
class Guidelines:
    """The annotation guidelines: instructions, per-type guidance and contrasts."""

    instructions: str
    type_notes: dict
    contrasts: tuple[Contrast, ...]


def _split_sections(markdown: str) -> dict[str, str]:
    """``## id`` sections of a markdown file → {id: body}."""
    out: dict[str, list[str]] = {}
    current = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def load_guidelines(directory: Path | str = GUIDELINES_DIR, tax: Taxonomy | None = None) -> Guidelines:
    """Read guidelines/instructions.md, error_types.md and contrasts.toml (InputError names a bad file)."""
    tax = tax or taxonomy()
    directory = Path(directory)
    try:
        instructions = (directory / "instructions.md").read_text(encoding="utf-8")
        notes = _split_sections((directory / "error_types.md").read_text(encoding="utf-8"))
        raw = tomllib.loads((directory / "contrasts.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read the guidelines: {exc}", str(directory)) from exc
    unknown = [k for k in notes if k not in tax.ids]
    if unknown:
        raise InputError(f"error_types.md has a section for unknown type {unknown[0]!r}", str(directory / "error_types.md"))
    contrasts = []
    source = str(directory / "contrasts.toml")
    for n, c in enumerate(raw.get("contrast", []), start=1):
        try:
            tax.validate_ids(c["types"], source, f"contrast #{n}")
            examples = []
            for m, ex in enumerate(c.get("examples", ()), start=1):
                where = f"contrast #{n}, example #{m}"
                if not isinstance(ex, dict) or not ex.get("types"):
                    raise InputError("an example needs a case and the types to tick "
                                     "({ case = \"...\", types = [\"id\", ...] })", source, where)
                examples.append(ContrastExample(ex["case"], tax.validate_ids(ex["types"], source, where), ex.get("why", "")))
            contrasts.append(Contrast(c["id"], c["title"], tuple(c["types"]), c["rule"], tuple(examples)))
        except KeyError as exc:
            raise InputError(f"missing field {exc.args[0]!r}", source, f"contrast #{n}") from None
    return Guidelines(instructions=instructions, type_notes=notes, contrasts=tuple(contrasts))
