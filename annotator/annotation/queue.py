"""One user's queue in one project: where to start, what comes next, one caption's task, save, skip and
drafts (see the package docstring for the order of the queue)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..errors import InputError, NotFound, PermissionDenied
from ..model import Judgement, JudgementKind, Label, Role
from .rules import STAGE_COARSE, STAGE_FINE, STAGE_FULL, _check_note, check_draft, detector_hints, validate


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
    def shown_revision(self) -> int:
        """The revision of the user's own judgement this task read (0: none), which a save of it is based on."""
        return int(self.current.revision) if self.current is not None else 0

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
    spans: tuple = ()  # annotator.spans.Span: the words marked so far


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
        from ..store.assignments import has_second_assignments
        from ..store.project_settings import DEFAULT_SECOND_PASS, SECOND_PASS_KEY, get_setting
        from ..store.projects import project_id
        from ..store.users import user_id
        role = Role(role)
        if create_user:
            from ..accounts.auth import ensure_user_id
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
        from ..store.assignments import queue_progress
        with self.store.read() as conn:
            assigned, done, waiting = queue_progress(conn, self.user_id, self.project_id, self.staged)
        return Progress(done, assigned, waiting)

    def size(self) -> int:
        """Number of captions in the queue."""
        from ..store.assignments import queue_size
        with self.store.read() as conn:
            return queue_size(conn, self.user_id, self.project_id)

    def first_todo(self) -> int | None:
        """Where a new session starts: the first caption still to do (None when all are done)."""
        return self.next_todo(after=-1)

    def next_todo(self, after: int = -1) -> int | None:
        """The next position to work on after ``after`` (see the module docstring for the order)."""
        from ..store.assignments import fine_pass_ready, first_skipped, first_unseen
        with self.store.read() as conn:
            uid, pid = self.user_id, self.project_id
            pos = first_unseen(conn, uid, pid, after)
            if pos is None and after >= 0:
                pos = first_unseen(conn, uid, pid, -1)
            if pos is not None:
                return pos
            if self.staged:
                ready = fine_pass_ready(conn, uid, pid, after=after, limit=1) or fine_pass_ready(conn, uid, pid, limit=1)
                if ready:
                    return ready[0]
            pos = first_skipped(conn, uid, pid, after)
            if pos is None and after >= 0:
                pos = first_skipped(conn, uid, pid, -1)
            return pos

    def neighbour(self, position: int, step: int) -> int | None:
        """The previous (step=-1) or next (step=+1) position in queue order, or None."""
        from ..store.assignments import neighbour_position
        with self.store.read() as conn:
            return neighbour_position(conn, self.user_id, self.project_id, position, step)

    # -- one caption -------------------------------------------------------

    def task(self, position: int) -> Task:
        """The task at ``position`` (NotFound if the queue has no such position)."""
        from ..store.assignments import assignment_at, first_annotator_label
        from ..store.judgements import current_judgement
        from ..store.tasks import caption_context
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

    def save(self, task: Task, label: Label | str | None, error_types=(), note: str = "", seconds: float = 0.0, *,
             base_revision: int | None = None, spans=(), suggested: bool | None = None) -> SaveResult:
        """Validate and store one revision of the user's judgement of ``task`` (committed on return).

        ``spans``: where in the caption the error types are (annotator.spans; checked there).
        ``base_revision`` is the revision of the user's judgement the page showed (0: none; default: the
        task's, :attr:`Task.shown_revision`): when another tab saved a newer one since, JudgementChanged
        (carrying that judgement) and nothing stored. CaptionChanged (nothing stored) when the task's caption
        id holds another caption by now. ``suggested``: whether the panel opened pre-filled from a judge
        (:meth:`suggestion`); recorded with the revision."""
        from ..spans import check_spans
        from ..store.judgements import save_judgement
        types = validate(label, error_types, note=note, stage=task.stage)
        spans = check_spans(spans, label=label, error_types=types, caption=task.caption.text)
        label = Label(label)
        self._check_assigned(task.caption_id, task.stamp)
        revision = save_judgement(self.store, task.caption_id, self.user_id, label=label, error_types=types,
                                  note=(note or "").strip(), seconds=max(0.0, float(seconds or 0.0)),
                                  kind=JudgementKind.ANNOTATION, stamp=task.stamp, spans=spans, suggested=suggested,
                                  base_revision=task.shown_revision if base_revision is None else base_revision)
        return SaveResult(task.caption_id, revision, label.value, types, _is_done(task))

    def skip(self, task: Task, note: str = "", seconds: float = 0.0) -> SaveResult | None:
        """Put a caption aside for later: stored as a revision without label, unless it is judged already
        (then nothing is written, so a skip never erases a judgement). Based on the task's revision as
        :meth:`save` is: JudgementChanged when another tab saved one since."""
        from ..store.judgements import save_judgement
        if task.current is not None and task.current.label is not None:
            self.discard_draft(task)
            return None
        _check_note((note or "").strip())
        self._check_assigned(task.caption_id, task.stamp)
        revision = save_judgement(self.store, task.caption_id, self.user_id, label=None, error_types=(),
                                  note=(note or "").strip(), seconds=max(0.0, float(seconds or 0.0)),
                                  stamp=task.stamp, base_revision=task.shown_revision)
        return SaveResult(task.caption_id, revision, None, (), False)

    # -- drafts -------------------------------------------------------------

    def save_draft(self, task: Task, label: Label | str | None = None, error_types=(), note: str = "",
                   spans=()) -> Draft:
        """Store the panel as it is as this user's draft of ``task`` (committed on return), replacing any
        earlier draft of the caption. Checked by :func:`check_draft`, not :func:`validate`: a draft may be
        incomplete. Its ``spans`` follow the rules of a judgement's (annotator.spans.check_spans: each span's
        type ticked, within the caption, none overlapping another of its type; none on an accurate choice),
        a draft with ticked types and no choice yet counting as inaccurate. PermissionDenied for a caption not
        in this queue; CaptionChanged (nothing stored) when the task's caption id holds another caption by now."""
        from ..spans import check_spans
        from ..store.drafts import put_draft
        label, types, note = check_draft(label, error_types, note)
        spans = check_spans(spans, label=Label.ACCURATE.value if label == Label.ACCURATE.value
                            else Label.INACCURATE.value, error_types=types, caption=task.caption.text)
        self._check_assigned(task.caption_id, task.stamp)
        with self.store.transaction() as conn:
            at = put_draft(conn, task.caption_id, self.user_id, label=label, error_types=types, note=note,
                           stamp=task.stamp, spans=spans)
        return Draft(task.caption_id, label, types, note, at, spans)

    def load_draft(self, task: Task) -> Draft | None:
        """This user's draft of ``task``, or None when there is none or a judgement saved after it (an
        import, another tab) supersedes it."""
        from ..store.drafts import get_draft
        with self.store.read() as conn:
            row = get_draft(conn, task.caption_id, self.user_id)
        if row is None:
            return None
        label, types, note, saved_at, spans = row
        cur = task.current
        if cur is not None and cur.created_at is not None and _utc(cur.created_at) >= saved_at:
            return None
        return Draft(task.caption_id, label, types, note, saved_at, spans)

    def discard_draft(self, task: Task) -> bool:
        """Remove this user's draft of ``task``; True when there was one."""
        from ..store.drafts import delete_draft
        with self.store.transaction() as conn:
            return bool(delete_draft(conn, task.caption_id, self.user_id))

    # -- detector hints -------------------------------------------------------

    def in_double_sample(self, task: Task) -> bool:
        """True when the task's caption is in the blind double-annotation sample (for either annotator)."""
        from ..store.assignments import in_double_sample
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

    # -- judge suggestions ----------------------------------------------------

    def suggestion(self, task: Task):
        """What the panel of ``task`` starts from when the project's suggestions are on
        (:mod:`annotator.judges.suggestions`): the judge's label, types and spans, or None — always None for the
        second annotator of a double-annotated caption, a practice item, a corrector during blind correction
        with closed views, a caption this user has judged or drafted already, and a caption the judge did not
        score."""
        from ..correction.blind import views_closed_for
        from ..judges.suggestions import suggestion_judge, suggestion_of, withheld
        judge = suggestion_judge(self.store, self.project)
        if judge is None or task.current is not None:
            return None
        if withheld(is_second=task.is_second, is_practice=task.item.is_practice,
                    views_closed=views_closed_for(self.store, self.project, self.role)):
            return None
        if self.load_draft(task) is not None:
            return None
        return suggestion_of(self.store, self.project, task.caption_id, judge)

    # -- the caption list ---------------------------------------------------

    def listing(self, status: str = "all", *, offset: int = 0, limit: int = 50) -> list["QueueEntry"]:
        """One page of this queue in queue order, filtered by ``status`` (a key of :data:`CAPTION_FILTERS`;
        InputError for another). Reads only this user's own judgements."""
        from ..store.assignments import queue_listing
        _check_filter(status)
        with self.store.read() as conn:
            rows = queue_listing(conn, self.user_id, self.project_id, status, offset=max(0, int(offset)),
                                 limit=max(1, int(limit)))
        return [QueueEntry(r.position, r.caption_id, r.item_key, r.text,
                           ("to do" if not r.seen else "skipped" if r.label is None else r.label),
                           tuple((r.error_types or "").split()), r.note or "", r.revision) for r in rows]

    def listing_count(self, status: str = "all") -> int:
        """How many captions of this queue pass ``status`` (see :meth:`listing`)."""
        from ..store.assignments import queue_listing_count
        _check_filter(status)
        with self.store.read() as conn:
            return queue_listing_count(conn, self.user_id, self.project_id, status)

    def listing_counts(self) -> dict[str, int]:
        """:meth:`listing_count` of every filter of :data:`CAPTION_FILTERS` at once (one pass over the queue)."""
        from ..store.assignments import queue_listing_counts
        with self.store.read() as conn:
            return queue_listing_counts(conn, self.user_id, self.project_id)

    def position_of(self, number: int) -> int | None:
        """The position of caption ``number`` as the page counts them ("Caption 3 of 40" is number 3), or None
        when the queue has no such caption."""
        from ..store.assignments import assignment_at
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
        from ..store.judgements import history
        with self.store.read() as conn:
            return history(conn, caption_id, self.user_id, "annotation")

    def _check_assigned(self, caption_id: int, stamp=None) -> None:
        from ..store.assignments import assignment_of_caption
        from ..store.stamps import check_caption_stamp
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
