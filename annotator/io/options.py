"""How a reader declares the options it takes besides its file, so the command line can be built from them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReaderOption:
    """One option of a format's read function.

    ``name`` is the keyword argument of the read function; ``flag`` its
    command-line spelling; ``kind`` is ``"text"`` (one value) or ``"list"``
    (comma-separated values, given to the reader as a list).
    """

    name: str
    flag: str
    help: str
    metavar: str | None = None
    kind: str = "text"

    def __post_init__(self):
        if self.kind not in ("text", "list"):
            raise ValueError(f"a reader option is 'text' or 'list', not {self.kind!r}")

    def value(self, raw: str | None):
        """The keyword value for the read function from the command line's text (None when not given)."""
        if raw is None or self.kind == "text":
            return raw
        return [part.strip() for part in raw.split(",") if part.strip()] or None
