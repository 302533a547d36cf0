"""How an import format declares itself, so the command line and the Data page can be built from it.

A format module (``annotator/io/<format>.py``) declares one :class:`ImportFormat`
named ``FORMAT``: its name, help, the :class:`ReaderOption` inputs it takes,
an :class:`Example` and the function that runs the import. The catalog
(:mod:`annotator.exchange.catalog`) lists the format modules; ``annotator import
<format>`` and the Data page's import form are generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

#: Kinds of input: free text, comma-separated text, one or several files, a folder on the server,
#: a choice among values the page lists (free text on the command line), an on/off switch, a whole number.
KINDS = ("text", "list", "file", "files", "folder", "choice", "switch", "integer")

#: Example files live in the package (installed with it), one folder per format.
EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


@dataclass(frozen=True)
class ReaderOption:
    """One input of a format.

    ``name`` is the keyword argument of the read (or run) function; ``flag`` its
    command-line spelling (None: a positional argument); ``kind`` one of
    :data:`KINDS` (``"list"``: comma-separated values, given as a list). ``label``,
    ``page_help``, ``key`` and ``types`` are for the Data page: ``key`` is the
    widget key (``{format}`` is replaced by the format name; default
    ``data_{format}_{name}``), ``types`` the file name endings an upload accepts.
    ``choices`` lists the values of a ``"choice"`` (``choice_label`` names one);
    ``cli_values`` spells a ``"switch"`` on the command line as ``flag off|on``
    (without it the switch is a plain flag).
    """

    name: str
    flag: str | None
    help: str
    metavar: str | None = None
    kind: str = "text"
    required: bool = False
    label: str | None = None
    page_help: str | None = None
    key: str | None = None
    types: tuple[str, ...] | None = None
    choices: Callable[[], list[str]] | None = None
    choice_label: Callable[[str], str] | None = None
    cli_values: tuple[str, str] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"a reader option is 'text' or 'list' (or {', '.join(KINDS[2:])}), not {self.kind!r}")

    def value(self, raw):
        """The keyword value for the read function from the command line's value (None when not given)."""
        if self.kind == "switch":
            return raw == self.cli_values[1] if self.cli_values else bool(raw)
        if raw is None or self.kind != "list":
            return raw
        return [part.strip() for part in raw.split(",") if part.strip()] or None

    def widget_key(self, format_name: str) -> str:
        """The Data page's widget key of this option in ``format_name``'s form."""
        return (self.key or "data_{format}_" + self.name).format(format=format_name)


@dataclass(frozen=True)
class Example:
    """An example of a format: its files (option name → file name(s) under the format's example folder) and the
    other option values an import of it takes. ``into_sample``: it adds to the sample project (judgements, scores
    and corrections need its captions); otherwise it creates a project of its own. ``expect``: what its import
    reports (fields of the ``--json`` summary), counted by hand from the files; the test suite checks it."""

    files: Mapping[str, str | tuple[str, ...]]
    values: Mapping[str, object] = field(default_factory=dict)
    into_sample: bool = False
    expect: Mapping[str, object] = field(default_factory=dict)

    def paths(self, format_name: str) -> dict[str, Path | list[Path]]:
        """The example's files as paths, keyed by option name (a list for a ``"files"`` option)."""
        folder = EXAMPLES_DIR / format_name
        return {name: ([folder / f for f in files] if isinstance(files, tuple) else folder / files)
                for name, files in self.files.items()}


@dataclass(frozen=True)
class ImportFormat:
    """One import format, as the catalog lists it.

    ``run(store, project, *, command_line, **values)`` stores what the format's
    reader (``read``) produced in one transaction and returns a result with a
    ``describe()`` line; ``command_line`` is True when the user named the files
    on the command line (their image roots are trusted), False for uploads on the
    Data page. ``creates_store``: the import may create the database (it can make
    a new project). ``dest_prefix`` prefixes the parsed options' names (human-score
    flags are shared with ``correlate``).
    """

    name: str
    help: str
    title: str
    options: tuple[ReaderOption, ...]
    read: Callable
    run: Callable
    example: Example
    description: str | None = None
    creates_store: bool = False
    dest_prefix: str = ""

    def get_option(self, name: str) -> ReaderOption:
        """The declared option called ``name``; KeyError if there is none."""
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def required(self) -> list[str]:
        """Names of the inputs an import cannot do without (the project first)."""
        return ["project"] + [o.name for o in self.options if o.required]


def image_root_option(help_prefix: str = "") -> ReaderOption:
    """The image-root input every format with images takes."""
    return ReaderOption(
        "image_root", "--image-root", help_prefix + "the folder image names are relative to: any folder, unless "
        "ANNOTATOR_IMAGE_ROOTS lists the allowed ones", metavar="DIR", kind="folder", key="data_{format}_root",
        label="Image folder on the server (optional)",
        page_help="Image file names are resolved inside this folder; paths leading outside it are refused. The folder "
                  "must lie in one the administrator allows (ANNOTATOR_IMAGE_ROOTS; by default the data directory).")


#: Captions that carry box mentions as ``[words|box ids]`` (line-aligned captions, COCO results).
INLINE_MENTIONS = ReaderOption(
    "inline_mentions", "--mentions", "'inline': the captions carry box correspondences as [words|box ids] and are stored "
    "as plain text with their mentions; 'none' (default): captions are text exactly as written", kind="switch",
    cli_values=("none", "inline"), key="data_{format}_inline", label="Captions carry box mentions as [words|box ids]",
    page_help="Each caption is stored as plain text with its mentions (for content selection). Leave it off and captions "
              "are kept exactly as written, brackets included.")
