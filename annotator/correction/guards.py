"""Guards: does a correction keep to the conservative rule of its error type?"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import GuardViolation, InputError
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
    if rule.kind == "class" and rule.drop and old and not new:
        return _check_garment_edit(rule, e, a, b, old, new, words, type_name, shown)
    if len(old_arts) != len(new_arts):
        return [f"{shown}: an article may switch between a and an, but not appear or disappear"]
    old1 = [t for t in old if t not in arts]
    new1 = [t for t in new if t not in arts]
    if not old1 and not new1:
        return [f"{shown}: only the article changed; a/an may switch only together with an allowed change"]
    old2 = [t for t in old1 if t not in rule.free]
    new2 = [t for t in new1 if t not in rule.free]
    anchors = rule.anchors or rule.words
    if rule.kind == "class" and (rule.modifiers or rule.drop):
        return _check_garment_edit(rule, e, a, b, old2, new2, words, type_name, shown)
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


def _garment_phrase(tokens: list[str], rule: Rule, words: CorrectionWords) -> tuple[bool, list[str]]:
    """Is ``tokens`` one or more garment phrases (modifiers, then a garment; joined by 'and' or a comma)?
    Returns that and the tokens that cannot be modifiers (verbs, prepositions, clause words)."""
    links = words.word_class("garment_links")
    bad = [t for t in tokens if t not in rule.words and t not in links
           and (_is_verb(t, words) or t in words.word_class("location_prepositions") or _is_boundary(t, words))
           and t not in (",",)]
    return bool(tokens) and tokens[-1] in rule.words and not bad, bad


def _check_garment_edit(rule: Rule, e: Edit, a: list[str], b: list[str], old: list[str], new: list[str],
                        words: CorrectionWords, type_name: str, shown: str) -> list[str]:
    colours = words.rules["colour"].words if "colour" in words.rules else frozenset()
    links = words.word_class("garment_links")
    if old and not new and rule.drop:
        # Dropping a garment that is not there: the whole phrase goes, with the words that joined it on.
        core = [t for t in old if t not in links]
        if core and (core[-1] in rule.words) and not _garment_phrase(core, rule, words)[1]:
            return []
        return [f"{shown}: only a whole garment phrase may be dropped (the garment word last)"]
    if not old or not new:
        what = "adds" if new else "removes"
        return [f"{shown}: {what} words instead of changing a garment into another"]
    if sorted(t for t in old if t in colours) != sorted(t for t in new if t in colours):
        return [f"{shown}: colours may not change for {type_name} (correct them as a colour error)"]
    after_a = a[e.i2] if e.i2 < len(a) else None
    after_b = b[e.j2] if e.j2 < len(b) else None
    for side, after in ((old, after_a), (new, after_b)):
        ok, bad = _garment_phrase(side + ([after] if after in rule.words and side[-1] not in rule.words else []),
                                  rule, words)
        if not ok:
            return [f"{shown}: only a garment phrase (its modifiers and the garment) may change for {type_name}"
                    + (f" (not: {_q(bad)})" if bad else "")]
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
                     words: CorrectionWords | None = None, spans=()) -> GuardReport:
    """Check a correction against the conservative rule of ``error_type``; never raises on a violation.

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
    if not _lower_tokens(corrected):
        violations.append("the corrected caption is empty")
    elif rule is not None and rule.kind in ("class", "pairs"):
        for e in edits:
            violations.extend(_check_edit(rule, e, a, b, words, type_name))
    else:
        if limit is not None and changed > limit:
            violations.append(f"{changed} words changed; at most {limit} may change for {type_name}")
        moved = _moved(edits, words)
        if moved:
            violations.append(f"word order changed: {', '.join(repr(m) for m in moved)} moved to another place in the sentence")
        if rule is not None and edits:
            violations.extend(_check_phrase(rule, edits, a, b, words, type_name))
    return GuardReport(error_type, rule.name if rule else "limit", tuple(violations), changed)


def _moved(edits: list[Edit], words: CorrectionWords) -> list[str]:
    """Content words that disappear in one place and appear in another (the sentence was reordered)."""
    removed = {t.lower() for e in edits for t in e.old} - words.reorder_ignore
    added = {t.lower() for e in edits for t in e.new} - words.reorder_ignore
    return sorted(removed & added)


# --------------------------------------------------------------------------- phrase rules

def _is_verb(token: str, words: CorrectionWords) -> bool:
    """A verb form that can head a verb phrase: listed, or an -ing form (running, holding)."""
    if token in words.word_class("not_verbs"):
        return False
    return token in words.word_class("verbs") or any(
        token.endswith(suffix) and len(token) > len(suffix) + 1 for suffix in words.word_class("verb_suffixes"))


def _is_boundary(token: str, words: CorrectionWords) -> bool:
    """A token that ends a phrase: punctuation or a word that opens a new clause."""
    return not re.match(r"\w", token) or token in words.word_class("clause_words")


def _region(edits: list[Edit]) -> tuple[int, int, int, int]:
    """The one stretch of both texts that holds every edit (equal tokens inside it included)."""
    return min(e.i1 for e in edits), max(e.i2 for e in edits), min(e.j1 for e in edits), max(e.j2 for e in edits)


def _verb_phrase_end(a: list[str], v: int, words: CorrectionWords) -> int:
    """End (exclusive) of the verb phrase headed at ``a[v]``: the verb with its object, up to punctuation, a
    clause word, or a location preposition that follows the object (sitting on a bench | in a park)."""
    preps = words.word_class("location_prepositions")
    k = v + 1
    while k < len(a) and not _is_boundary(a[k], words) and not (a[k] in preps and k > v + 1):
        k += 1
    return k


def _check_phrase(rule: Rule, edits: list[Edit], a: list[str], b: list[str], words: CorrectionWords,
                  type_name: str) -> list[str]:
    i1, i2, j1, j2 = _region(edits)
    while i2 > i1 and j2 > j1 and not re.match(r"\w", a[i2 - 1]) and not re.match(r"\w", b[j2 - 1]):
        i2, j2 = i2 - 1, j2 - 1  # a full stop that became an exclamation mark is not a change of phrase
    shown = f"'{' '.join(a[i1:i2]) or '∅'}' → '{' '.join(b[j1:j2]) or '∅'}'"
    clause = words.word_class("clause_words")
    new_clause = sorted({t for t in b[j1:j2] if t in clause or not re.match(r"\w", t)}
                        - {t for t in a[i1:i2] if t in clause or not re.match(r"\w", t)})
    if rule.kind == "verb_phrase":
        heads = [v for v in range(min(i1 + 1, len(a))) if _is_verb(a[v], words) and _verb_phrase_end(a, v, words) >= max(i1, v + 1)]
        if not heads:
            return [f"{shown}: {type_name} corrections change the verb phrase (the verb and its object), "
                    "and this changes words outside it"]
        v = heads[-1]
        end = _verb_phrase_end(a, v, words)
        if i2 > end:
            return [f"{shown}: changes words after the verb phrase '{' '.join(a[v:end])}' (keep the location and "
                    "what follows)"]
        if i1 == v and j2 > j1 and not _is_verb(b[j1], words):
            return [f"{shown}: the verb '{a[v]}' must become another verb"]
        if new_clause:
            return [f"{shown}: adds a new clause or sentence ({_q(new_clause)})"]
        return []
    # location_phrase
    preps = words.word_class("location_prepositions")
    starts = [p for p in range(min(i1 + 1, len(a))) if a[p] in preps
              and not any(_is_boundary(t, words) or _is_verb(t, words) for t in a[p + 1:i1])]
    if not starts:
        return [f"{shown}: {type_name} corrections change the location phrase (in a park, on a beach), "
                "and this changes words outside it"]
    p = starts[-1]
    end = p + 1
    while end < len(a) and not _is_boundary(a[end], words) and not _is_verb(a[end], words):
        end += 1
    if i2 > end:
        return [f"{shown}: changes words after the location phrase '{' '.join(a[p:end])}'"]
    if i1 == p and j2 > j1 and b[j1] not in preps:
        return [f"{shown}: the new location must start with a preposition (in, on, at, near …)"]
    if new_clause:
        return [f"{shown}: adds a new clause or sentence ({_q(new_clause)})"]
    return []


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
