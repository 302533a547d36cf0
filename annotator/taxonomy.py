"""The error taxonomy (the study's 20 types), loaded from ``guidelines/taxonomy.toml``.

The taxonomy is data: ids, names, groups, definitions, examples, keyboard keys
and the aliases other tools use. Everything else in annotator reads it from
here, so adding an alias or rewording a definition needs no code change.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from .errors import InputError

GUIDELINES_DIR = Path(__file__).resolve().parent.parent / "guidelines"
TAXONOMY_FILE = GUIDELINES_DIR / "taxonomy.toml"
#: a type's mask bit is below this: the store keeps the mask in a signed 64-bit integer, and -1 means "no mask"
MASK_BITS = 62


def read_toml(path: Path | str, what: str) -> dict:
    """The tables of a TOML data file (a ``guidelines/`` file or one given in its place); a file that cannot be
    read or parsed raises InputError ``cannot read {what}: …`` naming the path."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read {what}: {exc}", str(path)) from exc


@dataclass(frozen=True)
class ErrorType:
    """One error type of the taxonomy."""

    id: str
    #: the type's bit in the store's integer type mask (``annotator.store.codec``); fixed for good once stored
    bit: int
    name: str
    group: str
    key: str
    definition: str
    example_caption: str
    example_note: str
    aliases: tuple[str, ...] = ()
    correctable: bool = True
    #: every type the example caption carries (its own first); a caption can have several errors
    example_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Taxonomy:
    """The whole taxonomy: ordered types, groups and lookup helpers."""

    types: tuple[ErrorType, ...]
    groups: tuple[str, ...]
    accurate_key: str
    inaccurate_key: str
    #: the annotate page reminds the annotator of "Generally unrelated" once more than this many other
    #: types are ticked (0: never); see :func:`annotator.annotation.unrelated_hint`
    unrelated_hint_above: int
    _by_id: dict = field(default_factory=dict, compare=False, repr=False)
    _by_alias: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def ids(self) -> tuple[str, ...]:
        """Type ids in taxonomy order."""
        return tuple(t.id for t in self.types)

    @cached_property
    def mask_ids(self) -> tuple[str | None, ...]:
        """Type ids by mask bit: ``mask_ids[b]`` is the type whose ``bit`` is b (None for a bit no type has)."""
        out: list[str | None] = [None] * (max((t.bit for t in self.types), default=-1) + 1)
        for t in self.types:
            out[t.bit] = t.id
        return tuple(out)

    @cached_property
    def bit_of(self) -> dict[str, int]:
        """Type id → its mask bit."""
        return {t.id: t.bit for t in self.types}

    def get(self, type_id: str) -> ErrorType:
        """Return the type with this id; raise InputError for an unknown id."""
        try:
            return self._by_id[type_id]
        except KeyError:
            raise InputError(f"unknown error type id {type_id!r}; known ids: {', '.join(self.ids)}") from None

    def by_group(self, group: str) -> tuple[ErrorType, ...]:
        """Types of one group, in taxonomy order."""
        return tuple(t for t in self.types if t.group == group)

    def resolve(self, label: str) -> str | None:
        """Map an id, display name or alias (any case, trimmed) to a type id, or None."""
        return self._by_alias.get(_normalise(label))

    def resolve_strict(self, label: str, source: str | None = None, location=None) -> str:
        """Like :meth:`resolve` but raise InputError naming the label and where it came from."""
        type_id = self.resolve(label)
        if type_id is None:
            raise InputError(f"unknown error type label {label!r}", source, location)
        return type_id

    def in_order(self, type_ids) -> tuple[str, ...]:
        """``type_ids`` in taxonomy order, as every save stores them (ids the taxonomy does not know go last)."""
        position = self._position
        return tuple(sorted(type_ids, key=lambda t: position.get(t, len(position))))

    @cached_property
    def _position(self) -> dict[str, int]:
        return {t.id: n for n, t in enumerate(self.types)}

    def validate_ids(self, type_ids, source: str | None = None, location=None) -> tuple[str, ...]:
        """Check every id is known; return them de-duplicated in taxonomy order."""
        wanted = set()
        for type_id in type_ids:
            if type_id not in self._by_id:
                raise InputError(f"unknown error type id {type_id!r}", source, location)
            wanted.add(type_id)
        return tuple(i for i in self.ids if i in wanted)


def _normalise(label: str) -> str:
    return " ".join(str(label).strip().lower().replace("_", " ").split())


def load_taxonomy(path: Path | str | None = None) -> Taxonomy:
    """Read and validate a taxonomy file (``TAXONOMY_FILE`` when none is given; see guidelines/taxonomy.toml for
    the format)."""
    path = Path(TAXONOMY_FILE if path is None else path)
    data = read_toml(path, "taxonomy")
    meta = data.get("meta", {})
    groups = tuple(meta.get("groups", ()))
    types = []
    by_id: dict[str, ErrorType] = {}
    by_alias: dict[str, str] = {}
    keys_seen: dict[str, str] = {}
    bits_seen: dict[int, str] = {}
    reserved = {meta.get("accurate_key", "y"), meta.get("inaccurate_key", "n")}
    for n, raw in enumerate(data.get("type", []), start=1):
        where = f"type #{n}"
        try:
            example = raw.get("example", {})
            example_types = tuple(example.get("types", (raw["id"],)))
            if not example_types or example_types[0] != raw["id"]:
                raise InputError(f"the example's types must start with the type's own id {raw['id']!r}", str(path), where)
            etype = ErrorType(
                id=raw["id"],
                bit=raw["bit"],
                name=raw["name"],
                group=raw["group"],
                key=raw["key"],
                definition=raw["definition"],
                example_caption=example.get("caption", ""),
                example_note=example.get("note", ""),
                aliases=tuple(raw.get("aliases", ())),
                correctable=bool(raw.get("correctable", True)),
                example_types=example_types,
            )
        except KeyError as exc:
            raise InputError(f"missing field {exc.args[0]!r}", str(path), where) from None
        if etype.group not in groups:
            raise InputError(f"group {etype.group!r} is not one of {groups}", str(path), where)
        if etype.id in by_id:
            raise InputError(f"duplicate id {etype.id!r}", str(path), where)
        if etype.key in keys_seen or etype.key in reserved:
            raise InputError(f"keyboard key {etype.key!r} used twice", str(path), where)
        keys_seen[etype.key] = etype.id
        if isinstance(etype.bit, bool) or not isinstance(etype.bit, int) or not 0 <= etype.bit < MASK_BITS:
            raise InputError(f"bit of {etype.id!r} must be a whole number from 0 to {MASK_BITS - 1}, not {etype.bit!r}",
                             str(path), where)
        if etype.bit in bits_seen:
            raise InputError(f"bit {etype.bit} of {etype.id!r} is already {bits_seen[etype.bit]!r}'s", str(path), where)
        bits_seen[etype.bit] = etype.id
        by_id[etype.id] = etype
        types.append(etype)
        for label in (etype.id, etype.name, *etype.aliases):
            norm = _normalise(label)
            if by_alias.get(norm, etype.id) != etype.id:
                raise InputError(f"alias {label!r} names two types", str(path), where)
            by_alias[norm] = etype.id
    for n, etype in enumerate(types, start=1):
        unknown = [t for t in etype.example_types if t not in by_id]
        if unknown or len(set(etype.example_types)) != len(etype.example_types):
            problem = f"unknown type id {unknown[0]!r}" if unknown else "a type given twice"
            raise InputError(f"the example of {etype.id!r} has {problem}", str(path), f"type #{n}")
    return Taxonomy(
        types=tuple(types),
        groups=groups,
        accurate_key=meta.get("accurate_key", "y"),
        inaccurate_key=meta.get("inaccurate_key", "n"),
        unrelated_hint_above=_hint_above(meta, path),
        _by_id=by_id,
        _by_alias=by_alias,
    )


def _hint_above(meta: dict, path: Path) -> int:
    """``meta.unrelated_hint_above``: a whole number ≥ 0 (default 3, the upper end of the study's "two or three")."""
    if "unrelated_suggestion_threshold" in meta:
        # the old setting counted "this many or more"; a silent reinterpretation would move the hint by one
        raise InputError("meta.unrelated_suggestion_threshold is replaced by unrelated_hint_above "
                         "(the hint shows once MORE than this many types are ticked; 0 switches it off)", str(path))
    value = meta.get("unrelated_hint_above", 3)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"meta.unrelated_hint_above must be a whole number ≥ 0, not {value!r}", str(path))
    return value


@lru_cache(maxsize=1)
def taxonomy() -> Taxonomy:
    """The project's taxonomy, loaded once per process."""
    return load_taxonomy()


def __getattr__(name: str):
    # ERROR_TYPE_IDS: the type ids in taxonomy order, read from guidelines/taxonomy.toml when first asked for, so a
    # new error type is data only
    if name == "ERROR_TYPE_IDS":
        return taxonomy().ids
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The colours error spans are drawn in, by the taxonomy's group order (People, Subject, Object, General): the
#: annotate page and the Label Studio config use the same ones.
GROUP_COLOURS = ("#ffd1dc", "#cfe3ff", "#d4f5c9", "#ffe7a3", "#e6d6ff", "#d0f0f0")


def group_colours(tax: Taxonomy | None = None) -> dict[str, str]:
    """Type id → the colour of its group (what error spans are drawn in)."""
    tax = tax or taxonomy()
    by_group = {g: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, g in enumerate(tax.groups)}
    return {t.id: by_group[t.group] for t in tax.types}
