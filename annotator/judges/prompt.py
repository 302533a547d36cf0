"""The judge's prompt and its answers: built from guidelines/judge_prompt.md and the taxonomy, read strictly.

The template (a versioned Markdown file) has a ``## System`` and a ``## User`` section; :func:`messages` fills
in the error types (every type's id, name, group, definition and example from guidelines/taxonomy.toml), the
caption, its words numbered from 0 and the references, and sends the picture with the user message as an
OpenAI-style ``image_url`` part (a ``data:`` URL).

An answer is one JSON object, ``{"inaccurate": bool, "types": [type, …], "spans": [{start, end, type, fix}]}``
(read with the strict JSON reader, after any Markdown code fence or text around the object). It does not parse
(:class:`Unparsable`) when it is no such object, names a type the taxonomy does not know, calls a caption
accurate with types, inaccurate without any, or gives a span outside the caption, of a type it did not name, or
overlapping another of its type. :func:`aggregate` turns k answers into a judge output: the share of answers
that say inaccurate, each type's share, and the spans whose words more than half of the answers mark.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import InputError
from ..spans import Span, caption_tokens, check_spans, parse_spans
from ..taxonomy import GUIDELINES_DIR, taxonomy
from .outputs import THRESHOLD, JudgeOutput

PROMPT_FILE = GUIDELINES_DIR / "judge_prompt.md"
_VERSION = re.compile(r"<!--\s*version:\s*([^\s>]+)\s*-->")


@dataclass(frozen=True)
class PromptTemplate:
    """The two sections of the prompt file and its version."""

    version: str
    system: str
    user: str


@lru_cache(maxsize=4)
def load_prompt(path: Path | str = PROMPT_FILE) -> PromptTemplate:
    """Read the prompt template (InputError naming the file when its version or a section is missing)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the judge prompt ({exc.strerror or exc})", str(path)) from None
    found = _VERSION.search(text)
    if found is None:
        raise InputError("the judge prompt has no version line (<!-- version: N -->)", str(path))
    body = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    parts = re.split(r"^##\s+(System|User)\s*$", body, flags=re.M | re.I)
    sections = {parts[i].lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    for name in ("system", "user"):
        if not sections.get(name):
            raise InputError(f"the judge prompt has no '## {name.capitalize()}' section", str(path))
    return PromptTemplate(found.group(1), sections["system"], sections["user"])


def types_text() -> str:
    """Every error type as the prompt lists it: id, name and group, definition, example."""
    lines = []
    for t in taxonomy().types:
        line = f"- {t.id} ({t.name}; {t.group}): {t.definition}"
        if t.example_caption:
            line += f" Example: \"{t.example_caption}\"" + (f" ({t.example_note})" if t.example_note else "")
        lines.append(line)
    return "\n".join(lines)


def numbered_words(caption: str) -> str:
    """The caption's words with their positions: ``0:A 1:man 2:in …``."""
    return " ".join(f"{i}:{w}" for i, w in enumerate(caption_tokens(caption)))


def _fill(text: str, values: dict[str, str]) -> str:
    # plain replacement: the template holds JSON braces that str.format would read as fields
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def messages(template: PromptTemplate, caption: str, references, image_url: str | None) -> list[dict]:
    """The chat messages for one caption (``image_url``: the picture as a data URL, or None without one)."""
    refs = "\n".join(f"- {r}" for r in references) or "(none)"
    values = {"types": types_text(), "caption": caption, "tokens": numbered_words(caption), "references": refs}
    user: list[dict] = [{"type": "text", "text": _fill(template.user, values)}]
    if image_url is not None:
        user.append({"type": "image_url", "image_url": {"url": image_url}})
    return [{"role": "system", "content": _fill(template.system, values)}, {"role": "user", "content": user}]


def shown_hash(template: PromptTemplate, caption: str, references, image: str | None) -> str:
    """SHA-256 of what the model is shown for a caption: a stored answer is reused only while this is unchanged."""
    h = hashlib.sha256()
    for part in (template.version, caption, *references, image or ""):
        h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    return h.hexdigest()


class Unparsable(ValueError):
    """An answer that is not the JSON object the prompt asks for (the reason is the message)."""


@dataclass(frozen=True)
class Answer:
    """One parsed answer of the model."""

    inaccurate: bool
    types: tuple[str, ...]
    spans: tuple[Span, ...]

    def to_json(self) -> dict:
        """JSON form (what the run's cache keeps beside the raw reply)."""
        return {"inaccurate": self.inaccurate, "types": list(self.types), "spans": [s.to_json() for s in self.spans]}

    @classmethod
    def from_json(cls, obj: dict) -> "Answer":
        """From :meth:`to_json`."""
        return cls(bool(obj["inaccurate"]), tuple(obj["types"]), parse_spans(obj["spans"]))


def _json_object(text: str) -> str:
    """The JSON object in a reply: the text between its first ``{`` and its last ``}`` (a code fence or words
    around it are dropped)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise Unparsable("no JSON object in the answer")
    return text[start:end + 1]


def parse_answer(text: str, caption: str) -> Answer:
    """Read one reply (see the module for what does not parse)."""
    from ..io.textfiles import parse_json
    if not isinstance(text, str):
        raise Unparsable("the answer has no text")
    try:
        obj = parse_json(_json_object(text), "answer")
    except InputError as exc:
        raise Unparsable(exc.detail) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("inaccurate"), bool):
        raise Unparsable("the answer has no true/false 'inaccurate'")
    raw_types = obj.get("types") or []
    if not isinstance(raw_types, list) or not all(isinstance(t, str) for t in raw_types):
        raise Unparsable("'types' is not a list of type ids")
    tax = taxonomy()
    resolved = [tax.resolve(t) for t in raw_types]
    if None in resolved:
        raise Unparsable(f"unknown error type {raw_types[resolved.index(None)]!r}")
    types = tax.in_order(set(resolved))
    if obj["inaccurate"] != bool(types):
        raise Unparsable("an accurate caption with error types" if types else "an inaccurate caption without types")
    try:
        spans = check_spans(obj.get("spans") or (), label="inaccurate" if types else "accurate", error_types=types,
                            caption=caption)
    except InputError as exc:
        raise Unparsable(exc.detail) from None
    return Answer(bool(types), types, spans)


def aggregate(caption_id: int, caption: str, answers: list[Answer], replies: list[str]) -> JudgeOutput:
    """k answers of one caption as a judge output: vote fractions, and the spans more than half mark."""
    k = len(answers)
    p = sum(a.inaccurate for a in answers) / k
    tax = taxonomy()
    types = {t: sum(t in a.types for a in answers) / k for t in tax.ids}
    spans = []
    n_words = len(caption_tokens(caption))
    for t in (t for t in tax.ids if types[t] >= THRESHOLD):
        votes = [0] * n_words
        for a in answers:
            for s in a.spans:
                if s.type == t:
                    for i in s.tokens():
                        votes[i] += 1
        spans.extend(_runs(votes, k, t, [s for a in answers for s in a.spans if s.type == t]))
    return JudgeOutput(int(caption_id), p, types, tuple(sorted(spans)), tuple(replies))


def _runs(votes: list[int], k: int, type_id: str, given: list[Span]) -> list[Span]:
    """The runs of words more than half of ``k`` answers mark, each with the fix most answers gave it exactly."""
    out, start = [], None
    for i, v in enumerate(votes + [0]):
        if v * 2 > k and start is None:
            start = i
        elif v * 2 <= k and start is not None:
            fixes = [s.fix for s in given if (s.start, s.end) == (start, i) and s.fix]
            fix = max(set(fixes), key=lambda f: (fixes.count(f), f)) if fixes else None
            out.append(Span(start, i, type_id, fix))
            start = None
    return out
