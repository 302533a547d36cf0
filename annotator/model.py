"""Domain objects, independent of storage.

These dataclasses are what importers produce, what writers consume and what
the analysis code reads. The store turns them into rows and back.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime


class Role(str, enum.Enum):
    """What a user may do. Order matters only for display."""

    ANNOTATOR = "annotator"
    LEAD = "lead"
    ANALYST = "analyst"
    ADMIN = "admin"


class Label(str, enum.Enum):
    """The coarse judgement of Task 1."""

    ACCURATE = "accurate"
    INACCURATE = "inaccurate"


class JudgementKind(str, enum.Enum):
    """An annotator's own judgement, or a lead's adjudicated one."""

    ANNOTATION = "annotation"
    ADJUDICATION = "adjudication"


@dataclass(frozen=True)
class Mention:
    """A span of a text that points at one or more gold boxes.

    ``start``/``end`` are token indices (whitespace tokens of the text, end
    exclusive); ``box_ids`` are the item's box ids the span refers to.
    """

    start: int
    end: int
    box_ids: tuple[str, ...]
    phrase_type: str | None = None


@dataclass(frozen=True)
class Box:
    """A gold bounding box of an item, in pixels of the original image."""

    box_id: str
    label: str
    x: float
    y: float
    w: float
    h: float
    synset: str | None = None

    @property
    def area(self) -> float:
        """Box area in square pixels."""
        return self.w * self.h

    @property
    def centre(self) -> tuple[float, float]:
        """Centroid (x, y) of the box."""
        return (self.x + self.w / 2.0, self.y + self.h / 2.0)


@dataclass(frozen=True)
class Reference:
    """A human reference description of an item."""

    text: str
    mentions: tuple[Mention, ...] = ()

    @property
    def box_ids(self) -> frozenset[str]:
        """The set of box ids this reference mentions."""
        return frozenset(b for m in self.mentions for b in m.box_ids)


@dataclass(frozen=True)
class Caption:
    """A generated caption for one item by one system."""

    system: str
    text: str
    mentions: tuple[Mention, ...] = ()
    caption_id: int | None = None
    line: int | None = None  # 0-based line in the system's captions (when read from the store)
    # Sample (or beam) index among the system's descriptions of this item: 0 for the first. A system may hold
    # several per image (a pool of samples); annotation works on one (annotator.store.samples).
    n: int = 0

    @property
    def box_ids(self) -> frozenset[str]:
        """The set of box ids this caption mentions."""
        return frozenset(b for m in self.mentions for b in m.box_ids)


@dataclass
class Item:
    """One image with its gold boxes, references and captions."""

    key: str
    image: str | None = None
    width: int | None = None
    height: int | None = None
    boxes: list[Box] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    captions: list[Caption] = field(default_factory=list)
    is_practice: bool = False
    item_id: int | None = None

    def box(self, box_id: str) -> Box:
        """Return the box with this id (KeyError if none)."""
        for b in self.boxes:
            if b.box_id == box_id:
                return b
        raise KeyError(box_id)


@dataclass
class Project:
    """A set of items with a shared image root."""

    name: str
    image_root: str | None = None
    items: list[Item] = field(default_factory=list)
    description: str = ""
    # The image root when someone with shell access named it (an import run from the command line): it
    # may then lie outside the folders images are otherwise allowed from (annotator.images.check_image_root).
    trusted_image_root: str | None = None

    @property
    def systems(self) -> list[str]:
        """System names in order of first appearance."""
        seen: dict[str, None] = {}
        for item in self.items:
            for c in item.captions:
                seen.setdefault(c.system, None)
        return list(seen)


@dataclass(frozen=True)
class Judgement:
    """One revision of a judgement of a caption by a user.

    ``label`` is None for a skipped item. ``error_types`` are taxonomy ids.
    """

    caption_id: int
    user: str
    label: Label | None
    error_types: tuple[str, ...] = ()
    note: str = ""
    seconds: float = 0.0
    kind: JudgementKind = JudgementKind.ANNOTATION
    revision: int = 1
    created_at: datetime | None = None
    judgement_id: int | None = None
    spans: tuple = ()  # annotator.spans.Span: where in the caption each error type is


@dataclass(frozen=True)
class Correction:
    """One revision of a correction of a caption for one error type.

    ``corrected_text`` is None when the user deliberately left it untouched.
    ``override_reason`` is set when a conservative-correction guard was overridden.
    """

    caption_id: int
    error_type: str
    user: str
    original_text: str
    corrected_text: str | None
    override_reason: str | None = None
    revision: int = 1
    created_at: datetime | None = None
    correction_id: int | None = None
    blind: bool | None = None  # made with references and live scores hidden (None: not recorded)

    @property
    def untouched(self) -> bool:
        """True when the user decided to leave the caption as it was."""
        return self.corrected_text is None


@dataclass(frozen=True)
class User:
    """An account. ``password_hash`` is None for accounts made by imports.

    ``session_epoch`` (set by a log-in) is the account's value that sessions started now remember;
    ``must_change_password`` (set by a log-in) says the password was generated by an admin and must be
    replaced before the app opens. ``email``: the account's e-mail address (None: none given), the name other
    tools (Label Studio) know the person by.
    """

    name: str
    role: Role
    password_hash: str | None = None
    user_id: int | None = None
    session_epoch: int | None = None
    must_change_password: bool = False
    email: str | None = None


class FieldAccess(Mapping):
    """Read a result dataclass's fields by name too (``row["delta"]`` as ``row.delta``, ``set(row)`` its
    field names), so code written against the older dict results keeps working; new code reads attributes."""

    def __getitem__(self, name: str):
        if not isinstance(name, str) or name not in self._field_names():
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self):
        return iter(self._field_names())

    def __len__(self) -> int:
        return len(self._field_names())

    def _field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))

    def to_dict(self) -> dict:
        """The result as plain JSON-ready values (nested results included), field names as keys."""
        return asdict(self)
