"""Guards: does a correction keep to the conservative rule of its error type?"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import GuardViolation, InputError
from ..limits import check_free_text
from ..taxonomy import taxonomy
from .tokens import _POSSESSIVE, Edit, _lower_tokens, align
from .words import CorrectionWords, Rule, correction_words


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
    if rule.kind == "pairs" and old1 and len(old1) == len(new1) and all(_is_pair(rule, o, n) for o, n in zip(old1, new1)):
        return []  # word-for-word swaps (child → baby), even of words that are also free adjectives
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


#: A rule a caller adds for one caption (the span rule: edits stay inside the spans of the type being corrected):
#: called with the type id, the edits and both texts' lower-case tokens; returns violations as sentences.
CaptionRule = Callable[[str, list, list, list], list]


def check_correction(error_type: str, original: str, corrected: str, *, max_changed_words: int | None = None,
                     words: CorrectionWords | None = None, spans=(), caption_rule: CaptionRule | None = None
                     ) -> GuardReport:
    """Check a correction against the conservative rule of ``error_type``; never raises on a violation.

    The type's own rule (guidelines/correction_words.toml: what may change) runs first, then the words of other
    types that may not change under it (a colour under activity), then ``caption_rule`` when a caller has one for
    this caption — the single place where a per-caption rule joins the word-class rules.
    ``max_changed_words`` caps the changed words of the types without a word-class rule (activity, scene,
    number …); None uses the word-list file's cap, which is off unless the file sets one. ``spans`` (annotator.spans)
    of ``error_type`` replace the word-class rules with the span rule (annotator.correction.span_rule).
    """
    words = words or correction_words()
    etype = taxonomy().get(error_type)
    if not etype.correctable:
        raise InputError(f"captions of type {etype.name!r} are not corrected (the type is marked not correctable)")
    limit = words.max_changed_words if max_changed_words is None else int(max_changed_words)
    if limit is not None and limit < 0:
        raise InputError("the number of changed words cannot be negative")
    a, b = _lower_tokens(original), _lower_tokens(corrected)
    edits = align(original, corrected)
    changed = sum(max(sum(1 for t in e.old if re.match(r"\w", t)), sum(1 for t in e.new if re.match(r"\w", t))) for e in edits)
    if any(s.type == error_type for s in spans or ()):  # the marked words decide: span_rule.py
        from .span_rule import RULE_NAME, span_violations
        return GuardReport(error_type, RULE_NAME, tuple(span_violations(error_type, original, corrected, spans)), changed)
    rule = words.rule_for(error_type)
    type_name = etype.name.lower()
    violations: list[str] = []
    if not b:
        violations.append("the corrected caption is empty")
    elif edits:
        if rule is None or rule.kind not in ("class", "pairs", "garment"):
            # The study's one rule for every type: a fix that reorders the sentence is not made.
            moved = _moved(edits, words)
            if moved:
                violations.append(f"word order changed: {', '.join(repr(m) for m in moved)} moved to another "
                                  "place in the sentence")
        # Another type's words next: they name the type the edit belongs to.
        violations.extend(_kept_words(rule, edits, words, type_name))
        violations.extend(_type_rule(rule, edits, a, b, words, type_name))
        if (rule is None or rule.kind not in ("class", "pairs")) and limit is not None and changed > limit:
            violations.append(f"{changed} words changed; at most {limit} may change for {type_name}")
        if caption_rule is not None:
            violations.extend(caption_rule(error_type, edits, a, b))
    return GuardReport(error_type, rule.name if rule else "limit", tuple(violations), changed)


def _type_rule(rule: Rule | None, edits: list[Edit], a: list[str], b: list[str], words: CorrectionWords,
               type_name: str) -> list[str]:
    """The violations of the type's own rule (what may change under it)."""
    if rule is None or rule.kind == "limit":
        return []
    if rule.kind == "class":
        return _check_colour(rule, edits, a, b, words, type_name)
    if rule.kind == "pairs":
        out = []
        for e in edits:
            if not _joins_partner(rule, e, a):
                out.extend(_check_edit(rule, e, a, b, words, type_name))
        return out
    from . import rules as phrase_rules
    return phrase_rules.check(rule, edits, a, b, words, type_name)


def _joins_partner(rule: Rule, e: Edit, a: list[str]) -> bool:
    """'men' → 'men and women': a group of both, the partner joined on with 'and' (rules with join_partner)."""
    new = [t.lower() for t in e.new]
    return (rule.join_partner and not e.old and len(new) == 2 and new[0] == "and" and e.i1 > 0
            and _is_pair(rule, a[e.i1 - 1], new[1]))


def _kept_words(rule: Rule | None, edits: list[Edit], words: CorrectionWords, type_name: str) -> list[str]:
    """Words of another type's class that appear or change under this type, and other types' swaps."""
    if rule is None:
        return []
    old = Counter(t.lower() for e in edits for t in e.old)
    new = Counter(t.lower() for e in edits for t in e.new)
    added = new - old
    removed = old - new
    out = []
    owner = {"colours": "a colour", "garments": "a garment", "numbers": "a number"}
    for cls in rule.keep:
        members = words.word_class(cls)
        bad = sorted(t for t in added if t in members)
        if bad:
            out.append(f"{_q(bad)}: {owner.get(cls, cls)} may not appear or change when correcting {type_name} "
                       "(that is another error type's correction)")
    for other in rule.keep_pairs:
        other_rule = words.rules[other]
        swaps = sorted({f"'{o}' → '{n}'" for o in removed for n in added if _is_pair(other_rule, o, n)})
        if swaps:
            out.append(f"{', '.join(swaps)} changes {other}, not {type_name}")
    return out


def _moved(edits: list[Edit], words: CorrectionWords) -> list[str]:
    """Content words that disappear in one place and appear in another (the sentence was reordered)."""
    removed = {t.lower() for e in edits for t in e.old} - words.reorder_ignore
    added = {t.lower() for e in edits for t in e.new} - words.reorder_ignore
    return sorted(removed & added)


# --------------------------------------------------------------------------- colours

def _check_colour(rule: Rule, edits: list[Edit], a: list[str], b: list[str], words: CorrectionWords,
                  type_name: str) -> list[str]:
    """Colour words into colour words, and the colour belongs where the type says (a garment's, or not)."""
    colours = rule.words
    if len(a) == len(b) and all(x == y or (x in colours and y in colours) for x, y in zip(a, b)):
        # Colours swapped in place, however the alignment pairs them ("a blue shirt and a black shirt" →
        # "a black shirt and a blue shirt").
        return _colour_targets(rule, b, [k for k, (x, y) in enumerate(zip(a, b)) if x != y], words, type_name)
    out = []
    for e in edits:
        problems = _check_edit(rule, e, a, b, words, type_name)
        out.extend(problems or _colour_targets(rule, b, list(range(e.j1, e.j2)) or [e.j1], words, type_name))
    return out


def _colour_target(b: list[str], k: int, rule: Rule, words: CorrectionWords) -> str | None:
    """What the colour at (or right before) position ``k`` of the text describes: 'garment', another noun, or
    None when no noun follows it."""
    garment_tokens = {t for p in words.word_class("garments_phrases") for t in p}
    skip = rule.words | rule.free | {",", "and"}
    n = k
    while n < len(b) and b[n] in skip:
        n += 1
    stops = words.word_class("location_prepositions") | words.word_class("clause_words")
    for t in b[n:n + 3]:
        if t in garment_tokens:
            return "garment"
        if not re.match(r"\w", t) or t in stops or _is_verb(t, words):
            break
    return b[n] if n < len(b) and re.match(r"\w", b[n]) and b[n] not in stops else None


def _colour_targets(rule: Rule, b: list[str], positions, words: CorrectionWords, type_name: str) -> list[str]:
    out = []
    for k in positions:
        target = _colour_target(b, k, rule, words)
        if target is None or not rule.target:
            continue
        if rule.target == "garment" and target != "garment":
            out.append(f"the colour of '{target}' is not a colour of clothing (correct it as Color, if at all)")
        elif rule.target == "not_garment" and target == "garment":
            out.append("the colour of a garment is corrected as Color of clothing, not as Color")
    return list(dict.fromkeys(out))


def _is_verb(token: str, words: CorrectionWords) -> bool:
    """A verb form that can head a verb phrase: listed, or an -ing form (running, holding)."""
    if token in words.word_class("not_verbs"):
        return False
    return token in words.word_class("verbs") or any(
        token.endswith(suffix) and len(token) > len(suffix) + 1 for suffix in words.word_class("verb_suffixes"))


def enforce(report: GuardReport, override_reason: str | None) -> str | None:
    """Raise GuardViolation for a failing report without a reason; return the reason to store (or None)."""
    reason = (override_reason or "").strip() or None
    if report.ok:
        # Nothing to override: a reason given anyway is not stored, so exports
        # list only real overrides.
        return None
    if reason is not None:
        check_free_text(reason, "override reason")
    if reason is None:
        exc = GuardViolation("the correction breaks the conservative rule: " + "; ".join(report.violations)
                             + " — change less, leave the caption untouched, or give a reason to override")
        exc.violations = report.violations
        exc.report = report
        raise exc
    return reason
