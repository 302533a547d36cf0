"""Judgement files of the original error-analysis tool.

* coarse file: a JSON object mapping the 0-based caption line index (a string
  such as ``"0"``) to ``"congruent"`` or ``"incongruent"`` (``"accurate"`` /
  ``"inaccurate"`` are accepted as well, in any case);
* fine file (optional): a JSON object mapping the same indices to a list of
  error-type names in that tool's spelling (``"wrong-subject"``,
  ``"type-of-clothing"`` …), resolved through the taxonomy's aliases.

Rules: congruent → accurate, no types. Incongruent → inaccurate with the fine
types. Without a fine file incongruent captions are imported as inaccurate
with no types (a coarse-only import). With a fine file, every incongruent
caption must have at least one type in it, a congruent caption may not have
any, and the fine file may not name an index the coarse file lacks; any of
these, an unknown label or a malformed index stops the import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..model import Label
from ..taxonomy import taxonomy
from .textfiles import read_json

_COARSE = {"congruent": Label.ACCURATE, "accurate": Label.ACCURATE,
           "incongruent": Label.INACCURATE, "inaccurate": Label.INACCURATE}


@dataclass(frozen=True)
class LegacyJudgement:
    """One caption's judgement from the legacy files."""

    index: int
    label: Label
    error_types: tuple[str, ...]


def _entries(data, src: str) -> list[tuple[str, object]]:
    if isinstance(data, dict):
        return list(data.items())
    if isinstance(data, list):  # tolerated: position = index
        return [(str(i), v) for i, v in enumerate(data)]
    raise InputError("expected a JSON object mapping caption index to a value", src)


def _index(key: str, src: str) -> int:
    k = str(key).strip()
    if not re.fullmatch(r"[0-9]+", k):  # ASCII digits only: "²" or "١" are not line numbers
        raise InputError(f"caption index {key!r} is not a non-negative integer", src, f"key {key!r}")
    return int(k)


def read_coarse(path: Path | str) -> dict[int, Label]:
    """Index → accurate/inaccurate from a coarse file."""
    src = str(path)
    out: dict[int, Label] = {}
    for key, value in _entries(read_json(path), src):
        idx = _index(key, src)
        if idx in out:
            raise InputError(f"caption index {idx} appears twice", src, f"key {key!r}")
        if not isinstance(value, str) or value.strip().lower() not in _COARSE:
            raise InputError(f"unknown coarse label {value!r} (expected 'congruent' or 'incongruent')", src, f"key {key!r}")
        out[idx] = _COARSE[value.strip().lower()]
    if not out:
        raise InputError("the coarse file has no judgements", src)
    return out


def read_fine(path: Path | str) -> dict[int, tuple[str, ...]]:
    """Index → error type ids (taxonomy order) from a fine file; labels resolved through the aliases."""
    src = str(path)
    tax = taxonomy()
    out: dict[int, tuple[str, ...]] = {}
    for key, value in _entries(read_json(path), src):
        idx = _index(key, src)
        if idx in out:
            raise InputError(f"caption index {idx} appears twice", src, f"key {key!r}")
        labels = [value] if isinstance(value, str) else value
        if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
            raise InputError(f"expected a list of error-type names, got {value!r}", src, f"key {key!r}")
        ids = [tax.resolve_strict(v, src, f"key {key!r}") for v in labels]
        out[idx] = tax.validate_ids(ids, src, f"key {key!r}")
    return out


def combine(coarse: dict[int, Label], fine: dict[int, tuple[str, ...]] | None, *, coarse_src: str = "coarse",
            fine_src: str = "fine") -> list[LegacyJudgement]:
    """Apply the rules in the module docstring; return judgements sorted by index."""
    out = []
    if fine is not None:
        for idx in sorted(fine):
            if idx not in coarse:
                raise InputError(f"caption index {idx} has error types but no coarse judgement", fine_src, f"key '{idx}'")
    for idx in sorted(coarse):
        label = coarse[idx]
        types: tuple[str, ...] = ()
        if fine is not None:
            types = fine.get(idx, ())
            if label is Label.ACCURATE and types:
                raise InputError(f"caption index {idx} is congruent in {coarse_src} but has error types", fine_src,
                                 f"key '{idx}'")
            if label is Label.INACCURATE and not types:
                raise InputError(f"caption index {idx} is incongruent in {coarse_src} but has no error types in the fine file",
                                 fine_src, f"key '{idx}'")
        out.append(LegacyJudgement(idx, label, types))
    return out


def read_legacy_judgements(coarse: Path | str, fine: Path | str | None = None) -> list[LegacyJudgement]:
    """Read and check a coarse (and optional fine) file; nothing stored."""
    c = read_coarse(coarse)
    f = read_fine(fine) if fine is not None else None
    return combine(c, f, coarse_src=str(coarse), fine_src=str(fine) if fine is not None else "fine")
