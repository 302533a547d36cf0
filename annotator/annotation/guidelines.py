"""The annotation guidelines as the pages show them: instructions, per-type notes and contrasts."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..taxonomy import GUIDELINES_DIR, Taxonomy, taxonomy


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
