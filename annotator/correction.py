"""Conservative correction: guards, word-level diff and correction sets.

The correction step asks, for one error type at a time, how much a system's
scores would improve if that error were fixed and nothing else. To keep the
estimate honest the edits must be small, so every save passes a *guard*
chosen by the error type (rules and word lists: guidelines/correction_words.toml):

* colour types (``clothing_color``, ``color``): only colour words change, and
  only into colour words. A colour phrase may grow or shrink next to a colour
  word ("blue" → "blue and white"), but a colour cannot be added to or removed
  from a noun that had none.
* ``gender``: word-for-word swaps that keep age and number (man ↔ woman,
  boy ↔ girl, his ↔ her …); man → girl is refused because it changes age too.
* ``age``: swaps that keep gender (man ↔ boy, woman ↔ girl …); age adjectives
  (young, little, old …) may be added, dropped or swapped next to a person word.
* ``clothing_type``: garments into garments.
* every other type: at most ``max_changed_words`` changed words (default 3)
  and no reordering.

Words are compared case-insensitively; the text is saved exactly as typed.
*Articles*: "a" and "an" may switch into each other inside a changed stretch
that is otherwise allowed ("a blue shirt" → "an orange shirt"), because the
swap would be ungrammatical otherwise; an article may not appear, disappear or
change on its own.

*Reordering* is defined on the token alignment of :func:`align` (difflib's
SequenceMatcher on lower-cased tokens, a monotone alignment): a word moved
elsewhere appears as a deletion in one place and an insertion of the same
word in another. Function words listed in ``reorder_ignore`` do not count,
so "a" dropped here and added there is not a move.

A violation blocks the save unless the user overrides it with a reason; the
reason is stored with the correction and shown in every export.

*Correction sets* turn stored corrections into caption lists for rescoring:
one list per error type with only that type's corrections applied (every
other caption as generated) and an "all" list. For the "all" list a caption
with corrections for several types gets their word-level edits merged when
the edits touch different words of the original; when two types edited the
same words (or inserted at the same place) the edits of the type that comes
first in the taxonomy are kept, the other type's edits are left out of "all"
and the caption is reported as a conflict.
"""

from __future__ import annotations

import difflib
import html
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import GuardViolation, InputError, NotFound
from .taxonomy import GUIDELINES_DIR, taxonomy

if TYPE_CHECKING:  # the layers module (numpy, pandas) is imported where a layer is used
    from .layers import Layer

WORDS_FILE = GUIDELINES_DIR / "correction_words.toml"

# A word (letters/digits, inner hyphens or apostrophes kept: t-shirt, man's) or
# one punctuation character.
_TOKEN_RE = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
_POSSESSIVE = ("'s", "’s")


# --------------------------------------------------------------------------- word lists

@dataclass(frozen=True)
class Rule:
    """One guard rule from the word-list file."""

    name: str
    kind: str  # "class" | "pairs"
    words: frozenset = frozenset()  # single-token class members
    phrases: frozenset = frozenset()  # class members as token tuples (single ones included)
    pairs: frozenset = frozenset()  # frozensets of two words
    free: frozenset = frozenset()
    anchors: frozenset = frozenset()
    expand: bool = False


@dataclass(frozen=True)
class CorrectionWords:
    """The guard configuration: rules, which type uses which, and shared settings."""

    rules: dict
    type_rules: dict
    max_changed_words: int
    articles: frozenset
    reorder_ignore: frozenset

    def rule_for(self, error_type: str) -> Rule | None:
        """The rule of an error type, or None when the type uses the changed-word limit."""
        name = self.type_rules.get(error_type)
        return self.rules[name] if name else None


def load_correction_words(path: Path | str = WORDS_FILE) -> CorrectionWords:
    """Read and check a correction word-list file (format: guidelines/correction_words.toml)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read correction word lists: {exc}", str(path)) from exc
    meta = data.get("meta", {})
    rules: dict[str, Rule] = {}
    for name, raw in data.items():
        if name in ("meta", "rules") or not isinstance(raw, dict):
            continue
        kind = raw.get("rule")
        if kind not in ("class", "pairs"):
            raise InputError(f"rule must be 'class' or 'pairs', not {kind!r}", str(path), f"[{name}]")
        phrases = frozenset(tuple(_lower_tokens(w)) for w in raw.get("words", ()))
        pairs = []
        for pair in raw.get("pairs", ()):
            if len(pair) != 2 or pair[0].lower() == pair[1].lower():
                raise InputError(f"a pair needs two different words: {pair!r}", str(path), f"[{name}]")
            pairs.append(frozenset(w.lower() for w in pair))
        rules[name] = Rule(name=name, kind=kind, words=frozenset(p[0] for p in phrases if len(p) == 1),
                           phrases=phrases, pairs=frozenset(pairs), free=frozenset(w.lower() for w in raw.get("free", ())),
                           anchors=frozenset(w.lower() for w in raw.get("anchors", ())), expand=bool(raw.get("expand", False)))
    type_rules = dict(data.get("rules", {}))
    known = set(taxonomy().ids)
    for type_id, rule in type_rules.items():
        if type_id not in known:
            raise InputError(f"unknown error type id {type_id!r}", str(path), "[rules]")
        if rule not in rules:
            raise InputError(f"type {type_id!r} names a missing rule {rule!r}", str(path), "[rules]")
    return CorrectionWords(rules=rules, type_rules=type_rules, max_changed_words=int(meta.get("max_changed_words", 3)),
                           articles=frozenset(a.lower() for a in meta.get("articles", ("a", "an"))),
                           reorder_ignore=frozenset(w.lower() for w in meta.get("reorder_ignore", ())))


@lru_cache(maxsize=1)
def correction_words() -> CorrectionWords:
    """The project's correction word lists, loaded once per process."""
    return load_correction_words()


def correctable_types() -> list:
    """Error types the correction step offers (taxonomy order; 'unrelated' is excluded)."""
    return [t for t in taxonomy().types if t.correctable]


def rule_description(error_type: str, words: CorrectionWords | None = None, max_changed_words: int | None = None) -> str:
    """One sentence telling the user what the guard of ``error_type`` allows."""
    words = words or correction_words()
    rule = words.rule_for(error_type)
    limit = max_changed_words if max_changed_words is not None else words.max_changed_words
    if rule is None:
        return f"Change at most {limit} words, and do not move words to another place in the sentence."
    if rule.name == "colour":
        return "Only colour words may change, and only into other colour words (patterns are not colours)."
    if rule.name == "gender":
        return "Only swap gender words for their partner of the same age and number (man ↔ woman, boy ↔ girl, his ↔ her); never man ↔ girl."
    if rule.name == "age":
        return "Only swap age words for their partner of the same gender (man ↔ boy, woman ↔ girl); age adjectives such as young or old may change next to a person word."
    if rule.name == "clothing":
        return "Only garment words may change, and only into other garment words."
    return f"Only changes allowed by the '{rule.name}' word list."


# --------------------------------------------------------------------------- tokens and alignment

@dataclass(frozen=True)
class Token:
    """A token of a text and where it is (character offsets, end exclusive)."""

    text: str
    start: int
    end: int

    @property
    def is_word(self) -> bool:
        """True for a word token (not punctuation)."""
        return bool(re.match(r"\w", self.text))


def tokenize(text: str) -> list[Token]:
    """Split a caption into word and punctuation tokens, keeping positions."""
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text or "")]


def _lower_tokens(text: str) -> list[str]:
    return [t.text.lower() for t in tokenize(text)]


@dataclass(frozen=True)
class Edit:
    """One non-equal block of the alignment: original tokens [i1, i2) became corrected [j1, j2)."""

    tag: str  # "replace" | "delete" | "insert"
    i1: int
    i2: int
    j1: int
    j2: int
    old: tuple[str, ...]
    new: tuple[str, ...]


def _opcodes(a: list[str], b: list[str]):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def align(original: str, corrected: str) -> list[Edit]:
    """The word-level edits turning ``original`` into ``corrected`` (case-insensitive, monotone)."""
    ta, tb = tokenize(original), tokenize(corrected)
    out = []
    for tag, i1, i2, j1, j2 in _opcodes([t.text.lower() for t in ta], [t.text.lower() for t in tb]):
        if tag != "equal":
            out.append(Edit(tag, i1, i2, j1, j2, tuple(t.text for t in ta[i1:i2]), tuple(t.text for t in tb[j1:j2])))
    return out


# --------------------------------------------------------------------------- diff

@dataclass(frozen=True)
class DiffSegment:
    """A stretch of the word diff: ``tag`` is equal/replace/delete/insert; texts as written."""

    tag: str
    old: str
    new: str


def _join(tokens: list[Token], text: str) -> str:
    return text[tokens[0].start:tokens[-1].end] if tokens else ""


def word_diff(original: str, corrected: str) -> list[DiffSegment]:
    """Word-level diff of two captions (case-insensitive alignment, original spelling kept)."""
    ta, tb = tokenize(original), tokenize(corrected)
    segs = []
    for tag, i1, i2, j1, j2 in _opcodes([t.text.lower() for t in ta], [t.text.lower() for t in tb]):
        segs.append(DiffSegment(tag, _join(ta[i1:i2], original), _join(tb[j1:j2], corrected)))
    return segs


def _render_diff(original: str, corrected: str, equal, old, new) -> str:
    out = ""
    for seg in word_diff(original, corrected):
        pieces = [equal(seg.new)] if seg.tag == "equal" else ([old(seg.old)] if seg.old else []) + ([new(seg.new)] if seg.new else [])
        for text, first in ((p, (seg.old or seg.new)[0]) for p in pieces):
            # No space before closing punctuation, as in the caption itself.
            out += ("" if not out or first in _NO_SPACE_BEFORE else " ") + text
    return out


def diff_html(original: str, corrected: str) -> str:
    """The word diff as escaped HTML: removed words in <del>, added words in <ins>.

    Equal stretches show the corrected spelling (case changes are not edits).
    """
    return _render_diff(original, corrected, html.escape, lambda t: f"<del>{html.escape(t)}</del>",
                        lambda t: f"<ins>{html.escape(t)}</ins>")


def diff_text(original: str, corrected: str) -> str:
    """The word diff as plain text: [-removed-] {+added+} (for the CLI and exports)."""
    return _render_diff(original, corrected, lambda t: t, lambda t: f"[-{t}-]", lambda t: f"{{+{t}+}}")


# --------------------------------------------------------------------------- guards

@dataclass(frozen=True)
class GuardReport:
    """The outcome of checking one correction against its type's guard."""

    error_type: str
    rule: str  # rule name, or "limit"
    violations: tuple[str, ...]
    changed_words: int

    @property
    def ok(self) -> bool:
        """True when the correction keeps to the rule."""
        return not self.violations


def _covers(tokens: list[str], phrases: frozenset) -> bool:
    """True when ``tokens`` split completely into entries of ``phrases``."""
    n = len(tokens)
    ok = [False] * (n + 1)
    ok[0] = True
    lengths = sorted({len(p) for p in phrases})
    for i in range(n):
        if not ok[i]:
            continue
        for k in lengths:
            if i + k <= n and tuple(tokens[i:i + k]) in phrases:
                ok[i + k] = True
    return ok[n]


def _outside(tokens: list[str], phrases: frozenset) -> list[str]:
    members = {w for p in phrases for w in p}
    return [t for t in tokens if t not in members]


def _strip_possessive(word: str) -> tuple[str, str]:
    for suffix in _POSSESSIVE:
        if word.endswith(suffix) and len(word) > len(suffix):
            return word[:-len(suffix)], "'s"
    return word, ""


def _is_pair(rule: Rule, old: str, new: str) -> bool:
    (o, so), (n, sn) = _strip_possessive(old), _strip_possessive(new)
    if so != sn:
        return False
    return frozenset((o, n)) in rule.pairs or frozenset((old, new)) in rule.pairs


def _q(words) -> str:
    return " ".join(words) if words else "nothing"


def _neighbours(a: list[str], b: list[str], e: Edit) -> list[str]:
    """Tokens right before and after the edit, in the original and in the corrected text."""
    out = []
    if e.i1 > 0:
        out.append(a[e.i1 - 1])
    if e.i2 < len(a):
        out.append(a[e.i2])
    if e.j1 > 0:
        out.append(b[e.j1 - 1])
    if e.j2 < len(b):
        out.append(b[e.j2])
    return out


def _check_edit(rule: Rule, e: Edit, a: list[str], b: list[str], words: CorrectionWords, type_name: str) -> list[str]:
    old = [t.lower() for t in e.old]
    new = [t.lower() for t in e.new]
    arts = words.articles
    old_arts = [t for t in old if t in arts]
    new_arts = [t for t in new if t in arts]
    shown = f"'{' '.join(e.old) or '∅'}' → '{' '.join(e.new) or '∅'}'"
    if len(old_arts) != len(new_arts):
        return [f"{shown}: an article may switch between a and an, but not appear or disappear"]
    old1 = [t for t in old if t not in arts]
    new1 = [t for t in new if t not in arts]
    if not old1 and not new1:
        return [f"{shown}: only the article changed; a/an may switch only together with an allowed change"]
    old2 = [t for t in old1 if t not in rule.free]
    new2 = [t for t in new1 if t not in rule.free]
    anchors = rule.anchors or rule.words
    if rule.kind == "class":
        noun = "colour" if rule.name == "colour" else ("garment" if rule.name == "clothing" else f"'{rule.name}'")
        bad = _outside(old2, rule.phrases) + _outside(new2, rule.phrases)
        if bad or not _covers(old2, rule.phrases) or not _covers(new2, rule.phrases):
            return [f"{shown}: only {noun} words may change for {type_name} (not: {_q(bad) if bad else _q(old2 + new2)})"]
        if old2 and new2:
            return []
        if not rule.expand and (old2 or new2):
            what = "adds" if new2 else "removes"
            return [f"{shown}: {what} a {noun} word instead of changing one into another"]
        if not any(t in anchors for t in _neighbours(a, b, e)):
            what = "adds" if new2 else ("removes" if old2 else "changes")
            return [f"{shown}: {what} {noun} words where the caption named no {noun}; only change an existing {noun} into another"]
        return []
    # pairs
    if len(old2) != len(new2):
        extra = old2 if len(old2) > len(new2) else new2
        what = "removes" if len(old2) > len(new2) else "adds"
        return [f"{shown}: {what} words ({_q(extra)}); {type_name} corrections swap words one for one"]
    problems = []
    for o, n in zip(old2, new2):
        if not _is_pair(rule, o, n):
            problems.append(f"'{o}' → '{n}' is not an allowed {type_name} swap" + _pair_hint(rule, o, n, words))
    if problems:
        return problems
    if not old2 and not any(t in anchors for t in _neighbours(a, b, e)):
        return [f"{shown}: {' '.join(sorted(set(old1 + new1)))} may only change right next to a person word"]
    return []


def _pair_hint(rule: Rule, old: str, new: str, words: CorrectionWords) -> str:
    """Explain a refused swap when another rule (or two in a row) would explain it."""
    others = [r for r in words.rules.values() if r.kind == "pairs" and r.name != rule.name]
    for other in others:
        if _is_pair(other, old, new):
            return f" (it changes {other.name}, not {rule.name})"
        # man → girl: a swap of this rule followed by one of another (gender then age).
        for mid in {w for p in rule.pairs if old in p for w in p if w != old}:
            if _is_pair(other, mid, new):
                return f" (it changes {other.name} as well as {rule.name})"
    if rule.name == "gender":
        return " (the swap must keep age and number)"
    if rule.name == "age":
        return " (the swap must keep gender and number)"
    return ""


def check_correction(error_type: str, original: str, corrected: str, *, max_changed_words: int | None = None,
                     words: CorrectionWords | None = None) -> GuardReport:
    """Check a correction against the conservative rule of ``error_type``; never raises on a violation."""
    words = words or correction_words()
    etype = taxonomy().get(error_type)
    if not etype.correctable:
        raise InputError(f"captions of type {etype.name!r} are not corrected (the type is marked not correctable)")
    limit = words.max_changed_words if max_changed_words is None else int(max_changed_words)
    if limit < 0:
        raise InputError("the number of changed words cannot be negative")
    a, b = _lower_tokens(original), _lower_tokens(corrected)
    edits = align(original, corrected)
    changed = sum(max(sum(1 for t in e.old if re.match(r"\w", t)), sum(1 for t in e.new if re.match(r"\w", t))) for e in edits)
    rule = words.rule_for(error_type)
    violations: list[str] = []
    if not _lower_tokens(corrected):
        violations.append("the corrected caption is empty")
    elif rule is not None:
        for e in edits:
            violations.extend(_check_edit(rule, e, a, b, words, etype.name.lower()))
    else:
        if changed > limit:
            violations.append(f"{changed} words changed; at most {limit} may change for {etype.name.lower()}")
        removed = {t.lower() for e in edits for t in e.old} - words.reorder_ignore
        added = {t.lower() for e in edits for t in e.new} - words.reorder_ignore
        moved = sorted(removed & added)
        if moved:
            violations.append(f"word order changed: {', '.join(repr(m) for m in moved)} moved to another place in the sentence")
    return GuardReport(error_type, rule.name if rule else "limit", tuple(violations), changed)


def enforce(report: GuardReport, override_reason: str | None) -> str | None:
    """Raise GuardViolation for a failing report without a reason; return the reason to store (or None)."""
    reason = (override_reason or "").strip() or None
    if report.ok:
        # Nothing to override: a reason given anyway is not stored, so exports
        # list only real overrides.
        return None
    if reason is None:
        exc = GuardViolation("the correction breaks the conservative rule: " + "; ".join(report.violations)
                             + " — change less, leave the caption untouched, or give a reason to override")
        exc.violations = report.violations
        exc.report = report
        raise exc
    return reason


# --------------------------------------------------------------------------- saving

@dataclass(frozen=True)
class SavedCorrection:
    """What a save stored."""

    caption_id: int
    error_type: str
    user: str
    revision: int
    corrected_text: str | None
    override_reason: str | None
    report: GuardReport | None


def correct_caption(store, caption_id: int, error_type: str, user: str, corrected_text: str | None, *,
                    override_reason: str | None = None, max_changed_words: int | None = None,
                    create_role=None) -> SavedCorrection:
    """Check and store one correction of a caption for one error type, beside the original.

    ``corrected_text=None`` (or text identical to the original) records the
    deliberate decision to leave the caption untouched. A guard violation
    raises GuardViolation unless ``override_reason`` is given. Each save
    appends a revision; earlier ones stay in the history. ``create_role``
    creates a password-less account for ``user`` if it does not exist (the
    app's local mode).
    """
    from .store.correction_queries import caption_text
    from .store.corrections import insert_correction
    from .store.users import user_id

    taxonomy().get(error_type)
    with store.read() as conn:
        original = caption_text(conn, caption_id)
    report = None
    reason = None
    if corrected_text is not None:
        if not corrected_text.strip():
            raise InputError("the corrected caption is empty; use 'leave untouched' to keep the original")
        corrected_text = corrected_text.strip()
        if corrected_text == original:
            corrected_text = None
    if corrected_text is not None:
        report = check_correction(error_type, original, corrected_text, max_changed_words=max_changed_words)
        reason = enforce(report, override_reason)
    elif not taxonomy().get(error_type).correctable:
        raise InputError(f"captions of type {error_type!r} are not corrected")
    from sqlalchemy.exc import IntegrityError
    for attempt in range(8):
        try:
            with store.transaction() as conn:
                uid = user_id(conn, user, create_role=create_role)
                revision = insert_correction(conn, caption_id, error_type, uid, original_text=original,
                                             corrected_text=corrected_text, override_reason=reason)
            break
        except IntegrityError:
            if attempt == 7:
                raise
    return SavedCorrection(caption_id, error_type, user, revision, corrected_text, reason, report)


def leave_untouched(store, caption_id: int, error_type: str, user: str, *, create_role=None) -> SavedCorrection:
    """Record that ``user`` deliberately left the caption as generated for ``error_type``."""
    return correct_caption(store, caption_id, error_type, user, None, create_role=create_role)


# --------------------------------------------------------------------------- merging and correction sets

@dataclass(frozen=True)
class Merge:
    """The "all corrections" text of one caption."""

    text: str
    applied: tuple[str, ...]
    conflicting: tuple[str, ...]


_NO_SPACE_BEFORE = {".", ",", "!", "?", ";", ":", ")", "]", "}", "%"}
_NO_SPACE_AFTER = {"(", "[", "{"}


def _detokenize(tokens: list[str]) -> str:
    out = ""
    for t in tokens:
        if out and t not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out += " "
        out += t
    return out


def _overlaps(x: Edit, y: Edit) -> bool:
    if x.i1 == x.i2 and y.i1 == y.i2:
        return x.i1 == y.i1  # two insertions at one place: order unknown
    if x.i1 == x.i2:
        return y.i1 < x.i1 < y.i2
    if y.i1 == y.i2:
        return x.i1 < y.i1 < x.i2
    return x.i1 < y.i2 and y.i1 < x.i2


def merge_corrections(original: str, corrected_by_type: dict[str, str]) -> Merge:
    """Combine corrections of several types made independently on the same original.

    One correction is used as written. With several, the word-level edits of
    each type (relative to the original) are applied together when they touch
    different words; a type whose edits overlap those of a type earlier in
    the taxonomy is left out and reported in ``conflicting``. The merged text
    is rebuilt from tokens (punctuation attached to the preceding word), which
    the metrics' tokenizer treats exactly like the original spacing.
    """
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    types = sorted(corrected_by_type, key=lambda t: order.get(t, len(order)))
    if not types:
        return Merge(original, (), ())
    if len(types) == 1:
        return Merge(corrected_by_type[types[0]], (types[0],), ())
    ta = [t.text for t in tokenize(original)]
    accepted: list[Edit] = []
    applied, conflicting = [], []
    for t in types:
        edits = align(original, corrected_by_type[t])
        if any(_overlaps(e, x) for e in edits for x in accepted):
            conflicting.append(t)
            continue
        accepted.extend(edits)
        applied.append(t)
    if len(applied) == 1:
        return Merge(corrected_by_type[applied[0]], tuple(applied), tuple(conflicting))
    out: list[str] = []
    pos = 0
    # Insertions at a point come before a replacement starting there.
    for e in sorted(accepted, key=lambda e: (e.i1, e.i2 != e.i1)):
        out.extend(ta[pos:e.i1])
        out.extend(e.new)
        pos = max(pos, e.i2)
    out.extend(ta[pos:])
    return Merge(_detokenize(out), tuple(applied), tuple(conflicting))


@dataclass
class CorrectionSet:
    """A system's captions with its corrections, ready for rescoring.

    ``baseline`` is the captions in line order; ``by_type[type][line_no]`` the
    corrected text of a caption for a type (untouched decisions left out);
    ``untouched[type]`` counts deliberate no-change decisions; ``overrides``
    lists corrections saved past a guard; ``conflicts`` the lines whose
    corrections could not all be merged into the "all" variant; ``dropped``
    the corrections left out because the chosen layer no longer gives the
    caption that type.
    """

    project: str
    system: str
    baseline: list[str]
    line_caption_ids: list[int]
    by_type: dict[str, dict[int, str]] = field(default_factory=dict)
    untouched: dict[str, int] = field(default_factory=dict)
    overrides: list[dict] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    dropped: int = 0
    _all: list[str] | None = None

    @property
    def types(self) -> list[str]:
        """Types with at least one real correction, in taxonomy order."""
        return [t for t in taxonomy().ids if self.by_type.get(t)]

    def variant(self, error_type: str) -> list[str]:
        """Captions with only ``error_type``'s corrections applied."""
        hyps = list(self.baseline)
        for line, text in self.by_type.get(error_type, {}).items():
            hyps[line] = text
        return hyps

    def variants(self) -> dict[str, list[str]]:
        """One caption list per corrected type (taxonomy order)."""
        return {t: self.variant(t) for t in self.types}

    def changed(self, error_type: str) -> int:
        """Captions whose text the type's corrections change."""
        return sum(1 for line, text in self.by_type.get(error_type, {}).items() if text != self.baseline[line])

    def all_variant(self) -> list[str]:
        """Captions with every type's corrections merged (see :func:`merge_corrections`)."""
        if self._all is None:
            hyps = list(self.baseline)
            conflicts = []
            lines = sorted({line for d in self.by_type.values() for line in d})
            for line in lines:
                per_type = {t: d[line] for t, d in self.by_type.items() if line in d}
                merged = merge_corrections(self.baseline[line], per_type)
                hyps[line] = merged.text
                if merged.conflicting:
                    conflicts.append({"line_no": line, "caption_id": self.line_caption_ids[line],
                                      "applied": list(merged.applied), "left_out": list(merged.conflicting)})
            self._all = hyps
            self.conflicts = conflicts
        return list(self._all)


def correction_set(store, project: str, system: str, *, layer: Layer | str | None = None,
                   correctors: list[str] | None = None, types: list[str] | None = None) -> CorrectionSet:
    """Build a :class:`CorrectionSet` from the stored current corrections of a system.

    ``correctors`` limits to corrections by these users; when several users
    corrected the same caption for the same type the most recent correction
    wins. With a ``layer``, a correction counts only if the caption's
    judgement in that layer still carries the type (an adjudication that
    removed the type drops the correction). ``types`` limits the types.
    """
    from .layers import optional_layer
    from .store.correction_queries import system_captions, system_corrections
    from .store.projects import project_id
    layer = optional_layer(layer)
    with store.read() as conn:
        pid = project_id(conn, project)
        caps = system_captions(conn, pid, system)
        rows = system_corrections(conn, pid, system, only_users=correctors)
    carried = layer_types(store, project, system, layer) if layer is not None else None
    baseline = [c.text for c in caps]
    line_of = {c.id: c.line_no for c in caps}
    cs = CorrectionSet(project, system, baseline, [c.id for c in caps])
    wanted = set(types) if types else None
    latest: dict[tuple[int, str], object] = {}
    for r in rows:
        if wanted is not None and r.error_type not in wanted:
            continue
        if carried is not None and r.error_type not in carried.get(r.caption_id, ()):
            cs.dropped += 1
            continue
        key = (r.caption_id, r.error_type)
        if key not in latest or (r.created_at, r.correction_id) > (latest[key].created_at, latest[key].correction_id):
            latest[key] = r
    for (cid, etype), r in sorted(latest.items(), key=lambda kv: (line_of[kv[0][0]], kv[0][1])):
        line = line_of[cid]
        if r.corrected_text is None:
            cs.untouched[etype] = cs.untouched.get(etype, 0) + 1
            continue
        cs.by_type.setdefault(etype, {})[line] = r.corrected_text
        if r.override_reason:
            cs.overrides.append({"line_no": line, "caption_id": cid, "error_type": etype, "user": r.user,
                                 "corrected_text": r.corrected_text, "override_reason": r.override_reason})
    return cs


def layer_types(store, project: str, system: str, layer: Layer | str) -> dict[int, tuple[str, ...]]:
    """caption_id → error types (taxonomy order) of the inaccurate captions of ``system`` whose types
    ``layer`` knows; resolved by annotator.layers.build_layer, the same rules the analysis uses."""
    from .layers import build_layer
    from .store.analysis_queries import judgement_frame
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
    return build_layer(frame, layer, system=system).caption_types()


def queue(store, project: str, system: str, error_type: str, layer: Layer | str, *, user: str | None = None) -> list[dict]:
    """The captions to correct: every caption of ``system`` whose judgement in ``layer`` carries ``error_type``.

    Each entry: caption_id, line_no, item_key, item_id, text, error_types (of
    the layer judgement), and ``correction`` — ``user``'s current correction
    for this type as a dict (corrected_text, override_reason, revision) or None.
    """
    from .layers import parse_layer
    from .store.correction_queries import layer_queue
    from .store.projects import project_id, system_id
    layer = parse_layer(layer)
    etype = taxonomy().get(error_type)
    if not etype.correctable:
        raise InputError(f"captions of type {etype.name!r} are not corrected")
    with store.read() as conn:
        system_id(conn, project_id(conn, project), system)  # NotFound for an unknown project or system
    carried = layer_types(store, project, system, layer)
    with store.read() as conn:
        return layer_queue(conn, project_id(conn, project), system, error_type, carried, corrector=user)


def state_version(store, project: str) -> tuple:
    """A cheap fingerprint of a project's judgements and corrections: it changes with every save of either,
    so queues and live scores can be cached until it moves."""
    from .store.analysis_queries import data_version
    from .store.correction_queries import corrections_fingerprint
    from .store.projects import project_id
    with store.read() as conn:
        fp = corrections_fingerprint(conn, project_id(conn, project))
    return (*data_version(store, project), *fp)


def caption_corrections(store, caption_id: int, error_type: str | None = None) -> list:
    """Every stored revision of a caption's corrections (oldest first)."""
    from .store.corrections import correction_history
    with store.read() as conn:
        return correction_history(conn, caption_id, error_type)


def corrections_table(store, project: str, *, system: str | None = None, error_type: str | None = None,
                      with_diff: bool = True):
    """Current corrections of a project as a DataFrame for listing and export.

    Columns: system, line_no, item_key, error_type, user, revision,
    original_text, corrected_text, untouched, override_reason and (with
    ``with_diff``) a plain-text word diff.
    """
    from .store.corrections import current_corrections_frame
    if error_type is not None:
        taxonomy().get(error_type)
    df = current_corrections_frame(store, project, error_type=error_type, system=system)
    if df.empty:
        cols = ["system", "line_no", "item_key", "error_type", "user", "revision", "original_text", "corrected_text",
                "untouched", "override_reason"] + (["diff"] if with_diff else [])
        import pandas as pd
        return pd.DataFrame(columns=cols)
    df = df.copy()
    df["untouched"] = df["corrected_text"].isna()
    df["corrected_text"] = df["corrected_text"].astype(object).where(~df["untouched"], None)
    df["override_reason"] = df["override_reason"].astype(object).where(df["override_reason"].notna(), None)
    if with_diff:
        df["diff"] = [diff_text(o, c) if c is not None else "" for o, c in zip(df["original_text"], df["corrected_text"])]
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    df["_o"] = df["error_type"].map(order)
    df = df.sort_values(["system", "line_no", "_o", "user"]).drop(columns=["_o", "caption_id"])
    cols = ["system", "line_no", "item_key", "error_type", "user", "revision", "original_text", "corrected_text",
            "untouched", "override_reason"] + (["diff"] if with_diff else [])
    return df[cols].reset_index(drop=True)


def require_system(store, project: str, system: str) -> None:
    """Raise NotFound unless the project has this system."""
    from .store.projects import project_id, system_id
    with store.read() as conn:
        try:
            system_id(conn, project_id(conn, project), system)
        except NotFound:
            raise NotFound(f"project {project!r} has no system called {system!r}") from None
