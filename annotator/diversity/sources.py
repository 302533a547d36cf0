"""Where the texts of a diversity analysis come from: the reference corpus cr and per-image description pools.

The lexical-gap study defines the lexical diversity ratio against the
system's *training or source corpus* cr. A project stores its own reference
descriptions, which is what the tool compares with by default; a
:class:`ReferenceCorpus` may instead be another project's references, the
captions of one system (of this or another project), or a plain text file
(one description per line) such as a training set's captions. A project may
name its training corpus once (:func:`set_training_corpus`, ``annotator
settings --training-corpus``): every ld and Lg of that project then divides by
it unless another cr is chosen for one run; without one, the project's own
references stand in and :attr:`ReferenceCorpus.note` says that the study used
the training corpus. Its :meth:`~ReferenceCorpus.describe` text and
:meth:`~ReferenceCorpus.to_dict` record travel with every report.

:class:`DescriptionPools` groups a project's descriptions by image: the human
ones (its references) and the machine ones (every caption of every system: all
of a system's samples when it has several per image), the
material of the rich-versus-sparse protocol, the per-image TTR curves and the
µ estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import InputError

__all__ = ["ReferenceCorpus", "DescriptionPools", "reference_corpus", "reference_options", "project_pools",
           "TrainingCorpus", "training_corpus", "set_training_corpus", "STUDY_CR_NOTE"]

#: Kinds of reference corpus.
REFERENCE_KINDS = ("references", "captions", "file")

#: The project setting naming the training corpus: JSON ``{"project": P, "system": S or null}``; empty: none.
TRAINING_SETTING = "lexical_gap_training_corpus"

#: Said wherever a project's own references stand in for the training corpus.
STUDY_CR_NOTE = ("the lexical-gap study took cr from the system's training corpus; the project's own references "
                 "stand in for it (name one with annotator settings --project P --training-corpus P2)")


@dataclass(frozen=True)
class ReferenceCorpus:
    """The texts of a reference corpus cr and where they came from.

    ``kind``: ``"references"`` (a project's reference descriptions),
    ``"captions"`` (one system's captions in a project) or ``"file"`` (a text
    file, one description per line). ``project`` names the project of the
    first two, ``system`` the system of ``"captions"``, ``file`` the file's
    name. ``own`` is True for the analysed project's own references, the
    default cr.
    """

    kind: str
    texts: tuple[str, ...] = field(repr=False)
    project: str | None = None
    system: str | None = None
    file: str | None = None
    own: bool = False
    #: True when the project's settings named this corpus as its training corpus.
    training: bool = False

    def __post_init__(self):
        if self.kind not in REFERENCE_KINDS:
            raise ValueError(f"a reference corpus is one of {', '.join(REFERENCE_KINDS)}, not {self.kind!r}")

    @property
    def label(self) -> str:
        """Short name of the corpus in tables: ``references`` for the project's own, else what it is."""
        if self.own:
            return "references"
        if self.kind == "references":
            return f"references of {self.project}"
        if self.kind == "captions":
            return f"{self.system} ({self.project})"
        return str(self.file)

    def describe(self) -> str:
        """One line for table headers and pages, e.g. ``references of project 'coco' (25,010 texts)``."""
        if self.kind == "references":
            what = f"references of project {self.project!r}"
        elif self.kind == "captions":
            what = f"captions of system {self.system!r} in project {self.project!r}"
        else:
            what = f"text file {self.file!r}"
        return f"{what} ({len(self.texts):,} texts)" + (", the project's training corpus" if self.training else "")

    @property
    def note(self) -> str | None:
        """What a reader should know about this cr: for the project's own references, that the study used the
        training corpus; else None."""
        return STUDY_CR_NOTE if self.own else None

    def to_dict(self) -> dict:
        """JSON-ready record of the choice (without the texts); ``training`` and ``note`` when they apply."""
        out = {"kind": self.kind, "project": self.project, "system": self.system, "file": self.file,
               "texts": len(self.texts), "description": self.describe()}
        if self.training:
            out["training"] = True
        if self.note:
            out["note"] = self.note
        return out


def _file_texts(path_or_bytes, source: str | None) -> tuple[tuple[str, ...], str]:
    """Non-blank lines of a UTF-8 text file (a path or its bytes) and the name to show for it."""
    from ..io.textfiles import decode_utf8, read_bytes
    if isinstance(path_or_bytes, (bytes, bytearray)):
        name = source or "uploaded file"
        raw = bytes(path_or_bytes)
    else:
        name = source or str(path_or_bytes)
        raw = read_bytes(path_or_bytes)
    text = decode_utf8(raw, name)
    if "\x00" in text:
        raise InputError("contains a NUL character (is this a text file?)", name, text[:text.index("\x00")].count("\n") + 1)
    texts = tuple(line for line in text.split("\n") if line.strip())
    if not texts:
        raise InputError("the reference corpus file holds no text", name)
    return texts, (Path(name).name if source is None else name)


def reference_corpus(store, project: str, *, reference_project: str | None = None, system: str | None = None,
                     file=None, file_name: str | None = None) -> ReferenceCorpus:
    """The reference corpus cr for an analysis of ``project``.

    Nothing given: the training corpus named in ``project``'s settings
    (:func:`set_training_corpus`), else ``project``'s own references.
    ``reference_project``: that
    project's references (or, with ``system``, that system's captions there);
    ``system`` alone: a system of ``project`` itself. ``file``: a path or the
    bytes of a UTF-8 text file, one description per line (blank lines are
    skipped), shown as ``file_name`` when given; it cannot be combined with a
    project or system. Unknown projects and systems raise NotFound.
    """
    if file is not None:
        if reference_project is not None or system is not None:
            raise InputError("give either a reference corpus file or a reference project/system, not both")
        texts, name = _file_texts(file, file_name)
        return ReferenceCorpus("file", texts, file=name)
    from ..store.diversity import caption_texts, reference_texts
    if reference_project is None and system is None:
        named = training_corpus(store, project)
        if named is not None:
            return _training_texts(store, project, named)
    source = reference_project or project
    if system is not None:
        captions = caption_texts(store, source, [system])[system]
        return ReferenceCorpus("captions", tuple(c.text for c in captions), project=source, system=system)
    return ReferenceCorpus("references", tuple(reference_texts(store, source)), project=source,
                           own=source == project)


@dataclass(frozen=True)
class TrainingCorpus:
    """The training corpus a project names: another project's references, or one system's captions there."""

    project: str
    system: str | None = None

    def describe(self) -> str:
        """E.g. ``references of project 'coco-train'``."""
        if self.system is None:
            return f"references of project {self.project!r}"
        return f"captions of system {self.system!r} in project {self.project!r}"


def training_corpus(store, project: str) -> TrainingCorpus | None:
    """The training corpus ``project``'s settings name, or None."""
    import json

    from ..store.project_settings import get_setting
    from ..store.projects import project_id
    with store.read() as conn:
        value = get_setting(conn, project_id(conn, project), TRAINING_SETTING, "")
    if not value:
        return None
    data = json.loads(value)
    return TrainingCorpus(data["project"], data.get("system"))


def set_training_corpus(store, project: str, training_project: str | None, system: str | None = None, *,
                        actor_role=None) -> TrainingCorpus | None:
    """Name (or, with ``training_project=None``, forget) the training corpus of ``project``; lead/admin only.

    ``training_project`` must exist and, with ``system``, hold captions of
    that system; it cannot be ``project`` itself without a system (its own
    references are already the stand-in). Returns what is stored.
    """
    import json

    from ..accounts.access import LEADS, require_role
    from ..model import Role
    from ..store.project_settings import set_setting
    from ..store.projects import project_id, system_names
    require_role(actor_role or Role.ADMIN, LEADS, "naming a project's training corpus")
    value = ""
    named = None
    if training_project is not None:
        if training_project == project and system is None:
            raise InputError(f"project {project!r}'s own references are what stands in when no training corpus is "
                             "named; name another project (e.g. the training split)", "--training-corpus")
        with store.read() as conn:
            project_id(conn, training_project)  # NotFound for an unknown project
        if system is not None and system not in system_names(store, training_project):
            raise InputError(f"project {training_project!r} has no captions of system {system!r}", "--training-system")
        named = TrainingCorpus(training_project, system)
        value = json.dumps({"project": training_project, "system": system})
    elif system is not None:
        raise InputError("a training system needs its project (--training-corpus P2)", "--training-system")
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), TRAINING_SETTING, value)
    return named


def _training_texts(store, project: str, named: TrainingCorpus) -> ReferenceCorpus:
    from ..errors import NotFound
    from ..store.diversity import caption_texts, reference_texts
    try:
        if named.system is not None:
            texts = tuple(c.text for c in caption_texts(store, named.project, [named.system])[named.system])
            return ReferenceCorpus("captions", texts, project=named.project, system=named.system, training=True)
        return ReferenceCorpus("references", tuple(reference_texts(store, named.project)), project=named.project,
                               training=True)
    except NotFound as exc:
        raise NotFound(f"the training corpus named in project {project!r}'s settings ({named.describe()}) is gone: "
                       f"{exc}; name another with annotator settings --training-corpus") from None


@dataclass(frozen=True)
class ReferenceOptions:
    """What a reference corpus may be chosen from: the projects and each project's systems."""

    projects: tuple[str, ...]
    systems: dict[str, tuple[str, ...]]


def reference_options(store) -> ReferenceOptions:
    """Projects and their systems, for a page offering the choice of cr."""
    from ..store.projects import project_names, system_names
    names = tuple(project_names(store))
    return ReferenceOptions(names, {p: tuple(system_names(store, p)) for p in names})


@dataclass(frozen=True)
class DescriptionPools:
    """A project's descriptions grouped by image: human (references) and machine (system captions).

    ``keys[i]`` is image i's item key; ``human[i]`` its reference descriptions
    in order; ``machine[i]`` its captions, those of each system of ``systems``
    in that order, every sample of a system (n = 0, 1, …)
    (``machine_systems[i]`` says whose).
    """

    keys: tuple[str, ...]
    human: tuple[tuple[str, ...], ...]
    machine: tuple[tuple[str, ...], ...]
    machine_systems: tuple[tuple[str, ...], ...]
    systems: tuple[str, ...]
    project: str | None = None

    def pool(self, which: str) -> tuple[tuple[str, ...], ...]:
        """``"human"`` or ``"machine"`` descriptions per image."""
        if which == "human":
            return self.human
        if which == "machine":
            return self.machine
        raise ValueError(f"a pool is 'human' or 'machine', not {which!r}")

    def index(self, key: str) -> int:
        """Position of the image with item key ``key``; NotFound if the project has none."""
        from ..errors import NotFound
        try:
            return self.keys.index(key)
        except ValueError:
            raise NotFound(f"no image {key!r} in the project") from None


def pools_from(keys: Sequence[str], human: Sequence[Sequence[str]], machine: Sequence[Sequence[str]],
               systems: Sequence[str] = (), project: str | None = None) -> DescriptionPools:
    """DescriptionPools from plain lists (machine captions in ``systems`` order when named)."""
    machine = tuple(tuple(m) for m in machine)
    names = tuple(systems) or tuple(f"system {k + 1}" for k in range(max((len(m) for m in machine), default=0)))
    return DescriptionPools(tuple(keys), tuple(tuple(h) for h in human), machine,
                            tuple(names[:len(m)] for m in machine), names, project)


def project_pools(store, project: str, systems: Sequence[str] | None = None) -> DescriptionPools:
    """Per-image human and machine descriptions of a stored project (images in item order).

    ``systems`` restricts (and orders) the machine descriptions; an unknown
    name raises NotFound.
    """
    from ..store.diversity import caption_texts, item_keys, references_by_item
    refs = references_by_item(store, project)
    by_system = caption_texts(store, project, systems)
    captions: dict[str, list[tuple[str, str]]] = {}
    for name, rows in by_system.items():
        for row in rows:
            captions.setdefault(row.item_key, []).append((name, row.text))
    keys = tuple(k for k in item_keys(store, project) if k in refs or k in captions)
    machine = tuple(tuple(t for _, t in captions.get(k, ())) for k in keys)
    whose = tuple(tuple(s for s, _ in captions.get(k, ())) for k in keys)
    return DescriptionPools(keys, tuple(tuple(refs.get(k, ())) for k in keys), machine, whose, tuple(by_system),
                            project)
