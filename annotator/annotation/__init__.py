"""The annotation workflow without a user interface: rules, queue, save and next.

One module per job: :mod:`.rules` (validation, hints, keys), :mod:`.queue` (the queue, tasks, save, skip,
drafts), :mod:`.pictures` (the task's picture and prefetch), :mod:`.reading` (reading others'
judgements), :mod:`.guidelines`; every public name is importable from ``annotator.annotation``.

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

from .guidelines import Contrast, ContrastExample, Guidelines, load_guidelines
from .pictures import CaptionPicture, _item_jpeg, caption_picture, labels_as_text, pictures_sent, prefetch, task_image
from .queue import CAPTION_FILTERS, Draft, Progress, Queue, QueueEntry, SaveResult, Task
from .reading import judgement_history, judgements_of
from .rules import (
    MAX_NOTE_LENGTH, PAGE_KEYS, STAGE_COARSE, STAGE_FINE, STAGE_FULL, check_draft, detector_hints, keyboard_map,
    unrelated_hint, unrelated_hint_text, validate,
)

__all__ = [
    "CAPTION_FILTERS", "Contrast", "ContrastExample", "Draft", "Guidelines", "MAX_NOTE_LENGTH", "PAGE_KEYS", "Progress",
    "Queue", "QueueEntry", "STAGE_COARSE", "STAGE_FINE", "STAGE_FULL", "SaveResult", "Task", "check_draft",
    "CaptionPicture", "caption_picture", "detector_hints", "judgement_history", "judgements_of", "keyboard_map", "labels_as_text", "load_guidelines",
    "pictures_sent", "prefetch", "task_image", "unrelated_hint", "unrelated_hint_text", "validate",
]
