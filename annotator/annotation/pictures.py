"""The task's picture: its gold boxes drawn (JPEG, cached), which renders the page sends, and the
background prefetch of the next captions' pictures."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import InputError
from ..model import Item
from .queue import Queue, Task


def _item_jpeg(root, image, boxes: tuple, width, height, show_boxes: bool,
               trusted_root: str | None = None, show_labels: bool = True) -> tuple[bytes, str | None]:
    # JPEG instead of PNG: a tenth of the bytes for a photo, so the next item appears sooner. The render is
    # cached in annotator.images per file and modification time, so a photo replaced on disk is drawn anew.
    from ..images import render_boxes_bytes
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
    from ..store.tasks import caption_context
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
