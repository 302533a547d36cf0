"""The phrase rules of the guards: activity, scene, type of clothing, number, position and stance, subjects and
objects — each written from the error-analysis study's correction rules (its Section 5 and the guideline's
correction task): correct only the error of the chosen type, change as little as possible, let an activity fix
take its object along, leave the caption alone when the fix would restructure the sentence.

:func:`check` is called by :func:`annotator.correction.guards.check_correction` with the edits of one
correction and both texts as lower-case tokens; it returns the violations as sentences. The word classes the
rules read live in guidelines/correction_words.toml ([classes]).
"""

from __future__ import annotations

import re

from .tokens import Edit
from .words import CorrectionWords, Rule


def check(rule: Rule, edits: list[Edit], a: list[str], b: list[str], words: CorrectionWords,
          type_name: str) -> list[str]:
    """The violations of a phrase rule (``rule.kind`` other than class and pairs)."""
    checker = _CHECKS[rule.kind]
    return checker(rule, edits, a, b, words, type_name)


# --------------------------------------------------------------------------- shared helpers

def _is_word(t: str) -> bool:
    return bool(re.match(r"\w", t))


def _q(tokens) -> str:
    return " ".join(tokens) if tokens else "nothing"


def _shown(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> str:
    return f"'{' '.join(a[i1:i2]) or '∅'}' → '{' '.join(b[j1:j2]) or '∅'}'"


def _is_verb(t: str, words: CorrectionWords) -> bool:
    """A verb form that heads a verb phrase in the original: listed, or an -ing form that is not a noun."""
    if t in words.word_class("not_verbs"):
        return False
    return t in words.word_class("verbs") or any(t.endswith(s) and len(t) > len(s) + 1
                                                 for s in words.word_class("verb_suffixes"))


def _is_verb_form(t: str, words: CorrectionWords) -> bool:
    """A word that can carry a new verb phrase: a verb, an -ed form, or a listed form (held, about to …)."""
    return _is_verb(t, words) or t in words.word_class("verb_forms") or any(
        t.endswith(s) and len(t) > len(s) + 1 for s in words.word_class("participle_suffixes"))


def _is_strong_verb(t: str, words: CorrectionWords) -> bool:
    """A verb that surely ends a noun phrase: an -ing form or an auxiliary (bare forms like 'stand' may be nouns)."""
    return t in ("is", "are", "was", "were") or (_is_verb(t, words) and t not in words.word_class("verbs"))


def _is_boundary(t: str, words: CorrectionWords) -> bool:
    """Punctuation or a word that opens a new clause."""
    return not _is_word(t) or t in words.word_class("clause_words")


def _trim(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> tuple[int, int, int, int]:
    """Drop a final punctuation change (a full stop that became an exclamation mark is no change of phrase)."""
    while i2 > i1 and j2 > j1 and not _is_word(a[i2 - 1]) and not _is_word(b[j2 - 1]):
        i2, j2 = i2 - 1, j2 - 1
    return i1, i2, j1, j2


def _region(edits: list[Edit]) -> tuple[int, int, int, int]:
    """The one stretch of both texts that holds every edit (equal tokens inside it included)."""
    return min(e.i1 for e in edits), max(e.i2 for e in edits), min(e.j1 for e in edits), max(e.j2 for e in edits)


def _groups(edits: list[Edit], a: list[str], words: CorrectionWords, gap: int = 3) -> list[tuple[int, int, int, int]]:
    """Edits joined into stretches: two edits belong together when at most ``gap`` tokens of the original lie
    between them and none of those ends a phrase (one garment phrase, one noun phrase)."""
    out: list[list[int]] = []
    for e in edits:
        if out and e.i1 - out[-1][1] <= gap and not any(
                _is_boundary(t, words) or _is_strong_verb(t, words) for t in a[out[-1][1]:e.i1]):
            out[-1][1], out[-1][3] = e.i2, e.j2
        else:
            out.append([e.i1, e.i2, e.j1, e.j2])
    return [tuple(g) for g in out]


def _phrases(tokens: list[str], start: int, end: int, words: CorrectionWords) -> list[list[str]]:
    """The phrases joined on in ``tokens[start:end]``: each from a word that joins a further phrase on (a location
    preposition, with, to, and …) to the next such word. A run of them opens one phrase, also across the start of
    the stretch ("in front of"; "on in an arena"); one with no word after it is a verb's particle (putting a
    necklace on), no phrase."""
    joiners = words.word_class("location_prepositions") | words.word_class("phrase_joiners")
    out: list[list[str]] = []
    for k in range(start, end):
        t = tokens[k]
        follows = tokens[k + 1] if k + 1 < len(tokens) else None
        if t in joiners and not (k and tokens[k - 1] in joiners) and follows is not None and _is_word(follows) \
                and not _is_boundary(follows, words):
            out.append([])
        if out:
            out[-1].append(t)
    return out


def _beyond(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int, words: CorrectionWords, what: str,
            allowance: int = 0) -> list[str]:
    """The violation when the corrected stretch joins on more phrases than the stretch it replaces (``allowance``
    more allowed): the correction changes ``what`` and must not add content beside it."""
    new = _phrases(b, j1, j2, words)
    extra = len(new) - len(_phrases(a, i1, i2, words)) - allowance
    if extra <= 0:
        return []
    added = ", ".join(repr(" ".join(p)) for p in new[-extra:])
    return [f"{_shown(a, b, i1, i2, j1, j2)}: adds {added} beside {what}; the correction changes {what} (and the "
            "words that agree with it), it adds nothing more"]


def _new_clause(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int, words: CorrectionWords) -> list[str]:
    """Clause words or punctuation the corrected stretch has and the original stretch had not."""
    clause = words.word_class("clause_words")
    marks = [t for t in b[j1:j2] if t in clause or not _is_word(t)]
    return sorted(set(marks) - {t for t in a[i1:i2] if t in clause or not _is_word(t)})


# --------------------------------------------------------------------------- activity

def _check_activity(rule, edits, a, b, words, type_name):
    """The verb of the activity changes, with its object (and the place it took) where needed; the subject stays,
    nothing is only added, no new clause or second activity joins it. Keeping the verb, only an activity noun
    after it (playing soccer → playing rugby) or its particle (looking at → looking away from) may change."""
    i1, i2, j1, j2 = _trim(a, b, *_region(edits))
    shown = _shown(a, b, i1, i2, j1, j2)
    if i1 == i2:
        return [f"{shown}: only adds words; an activity is corrected by changing the verb, not by adding to it"]
    heads = [v for v in range(min(i1 + 1, len(a))) if _is_verb(a[v], words)
             and not any(_is_boundary(t, words) for t in a[v:i1])]
    if not heads:
        return [f"{shown}: {type_name} corrections change the verb phrase (the verb and its object), and this "
                "changes words before it (the subject)"]
    v = heads[-1]
    end = v + 1
    while end < len(a) and not _is_boundary(a[end], words):
        end += 1
    if i2 > end:
        return [f"{shown}: changes words after the clause of '{a[v]}' (keep the rest of the sentence)"]
    new_clause = _new_clause(a, b, i1, i2, j1, j2, words)
    if new_clause:
        return [f"{shown}: adds a new clause or sentence ({_q(new_clause)})"]
    if b[j1:j2].count("and") > a[i1:i2].count("and"):
        return [f"{shown}: adds a second activity with 'and'; correct the one activity instead"]
    arts = words.articles | {"the"}
    old = [t for t in a[i1:i2] if t not in arts]
    new = [t for t in b[j1:j2] if t not in arts]
    auxiliaries = ("is", "are", "was", "were", "be", "being")
    if i1 > v and not (a[v] in auxiliaries and i1 == v + 1):
        nouns = words.word_class("activity_nouns")
        preps = words.word_class("location_prepositions") | words.word_class("spatial")
        if a[v] in words.word_class("activity_noun_verbs") and old and new and all(t in nouns for t in old + new):
            return []
        if i1 == v + 1 and old and new and all(t in preps for t in old + new):
            return []
        return [f"{shown}: keeps the verb '{a[v]}' and changes its object or place; an activity is corrected by "
                "changing the verb (with its object where needed); an object or a place alone is another type's "
                "error"]
    # A finite verb may become one the lists do not know, in the same form (plays → tunes).
    same_form = i1 == v and a[v].endswith("s") and a[v] in words.word_class("verbs") and new and new[0].endswith("s")
    if not same_form and not any(_is_verb_form(t, words) for t in new):
        return [f"{shown}: the verb '{a[v]}' must become another verb"]
    gone, came = _places(a[i1:i2], words) - _places(b[j1:j2], words), _places(b[j1:j2], words) - _places(a[i1:i2], words)
    if gone and came:
        return [f"{shown}: changes the place ({_q(sorted(gone))} → {_q(sorted(came))}) as well as the activity; "
                "the place is a scene error"]
    allowance = _object_allowance(a, b, i1, i2, j1, j2, words)
    if came and not allowance:
        return [f"{shown}: adds a place ({_q(sorted(came))}) to the activity; a place is a scene error"]
    return _beyond(a, b, i1, i2, j1, j2, words, "the activity", allowance=allowance)


def _object_allowance(a, b, i1, i2, j1, j2, words: CorrectionWords) -> int:
    """1 when the new verb may take its object with a preposition the old one did without: the new stretch has a
    joining word right after a verb form (sitting in a tree, pushed in a wheelchair) and the old verb had an
    object (in the stretch, or right after it), so the phrase takes the object's place rather than adding one
    (the study's own "playing basketball" → "performing on stage": a place in the object's stead)."""
    joiners = words.word_class("location_prepositions") | words.word_class("phrase_joiners")
    new = b[j1:j2]
    after_verb = any(t in joiners and k and _is_verb_form(new[k - 1], words) for k, t in enumerate(new))
    old_words = [t for t in a[i1:i2] if _is_word(t)]
    had_object = (len(old_words) > 1 or (i2 < len(a) and _is_word(a[i2]) and a[i2] not in joiners
                                         and not _is_boundary(a[i2], words)))
    return int(after_verb and had_object)


def _places(tokens: list[str], words: CorrectionWords) -> set:
    """Place words that a location preposition opens in ``tokens`` (on the street; not: playing with water)."""
    preps, places = words.word_class("location_prepositions"), words.word_class("locations")
    out, opened = set(), False
    for t in tokens:
        if t in preps:
            opened = True
        elif _is_boundary(t, words) or _is_verb(t, words):
            opened = False
        elif opened and t in places:
            out.add(t)
    return out


# --------------------------------------------------------------------------- scene

def _phrase_start(tokens: list[str], i: int, words: CorrectionWords) -> int | None:
    """The location preposition that opens the phrase holding position ``i``, or None."""
    preps = words.word_class("location_prepositions")
    for p in range(min(i, len(tokens) - 1), -1, -1):
        if p < i and (_is_boundary(tokens[p], words) or _is_strong_verb(tokens[p], words)):
            return None
        if tokens[p] in preps:
            while p > 0 and tokens[p - 1] in preps:
                p -= 1  # in front of: the phrase opens with its first preposition
            return p
    return None


def _phrase_end(tokens: list[str], p: int, words: CorrectionWords) -> int:
    """End (exclusive) of the location phrase opened at ``p``: up to punctuation, a clause word, a verb, or the
    preposition of a next phrase (on a bench | in front of a tree)."""
    preps = words.word_class("location_prepositions")
    k = p + 1
    while k < len(tokens) and tokens[k] in preps:
        k += 1
    while k < len(tokens) and not _is_boundary(tokens[k], words) and not _is_strong_verb(tokens[k], words) \
            and not (tokens[k] in preps and tokens[k - 1] not in preps):
        k += 1
    return k


def _check_scene(rule, edits, a, b, words, type_name):
    """The place changes: inside a location phrase (its preposition may change with it: on a bench → in a
    truck), the whole phrase dropped, or a place word into a place word where no preposition opens it (A
    kitchen with … → A bathroom with …). Nothing only added; no new clause; a phrase that is a verb's object
    (looking at a camera) is no place."""
    i1, i2, j1, j2 = _trim(a, b, *_region(edits))
    shown = _shown(a, b, i1, i2, j1, j2)
    if i1 == i2:
        return [f"{shown}: only adds words; a scene is corrected by changing (or dropping) the place the caption "
                "names, not by adding one"]
    new_clause = _new_clause(a, b, i1, i2, j1, j2, words)
    if new_clause:
        return [f"{shown}: adds a new clause or sentence ({_q(new_clause)})"]
    places = words.word_class("locations")
    arts = words.articles | {"the"}
    old = [t for t in a[i1:i2] if t not in arts]
    new = [t for t in b[j1:j2] if t not in arts]
    p = _phrase_start(a, i1, words)
    if p is None:
        verbs = [t for t in old + new if _is_strong_verb(t, words)]
        if old and new and not verbs and any(t in places for t in old) and any(t in places for t in new):
            return []
        return [f"{shown}: {type_name} corrections change the location phrase (in a park, on a beach) or a place "
                "word, and this changes words outside it"]
    end = _phrase_end(a, p, words)
    if i2 > end:
        return [f"{shown}: changes words after the location phrase '{' '.join(a[p:end])}'"]
    if p > 0 and f"{a[p - 1]} {a[p]}" in words.word_class("object_verbs") and not any(t in places for t in old + new):
        return [f"{shown}: '{' '.join(a[p - 1:end])}' is what the verb is about, not a place; correct it as an "
                "object error"]
    if j1 < j2 and _phrase_start(b, j1, words) is None and b[j1] not in words.word_class("location_prepositions"):
        return [f"{shown}: the new location must start with a preposition (in, on, at, near …)"]
    return _beyond(a, b, i1, i2, j1, j2, words, "the place")


# --------------------------------------------------------------------------- type of clothing

def _garments(tokens: list[str], words: CorrectionWords) -> list[tuple]:
    """The garment phrases in ``tokens``, longest entry first (bathing suit, then suit)."""
    phrases = words.word_class("garments_phrases")
    longest = max((len(p) for p in phrases), default=1)
    out, k = [], 0
    while k < len(tokens):
        for n in range(longest, 0, -1):
            if tuple(tokens[k:k + n]) in phrases:
                out.append(tuple(tokens[k:k + n]))
                k += n
                break
        else:
            k += 1
    return out


def _check_garment(rule, edits, a, b, words, type_name):
    """Garment phrases into garment phrases: the garment (and its modifiers) may change, garments may merge into
    fewer, a garment that is not there may be dropped with the words that join it on or said to be absent
    (without a shirt); colours never appear, change or move (that is a colour error), and no garment is added."""
    colours = words.word_class("colours")
    links = words.word_class("garment_links")
    garment_tokens = {t for p in words.word_class("garments_phrases") for t in p}
    persons = {w for r in words.rules.values() if r.kind == "pairs" for p in r.pairs for w in p}
    preps = words.word_class("location_prepositions")
    out = []
    for i1, i2, j1, j2 in _groups(edits, a, words):
        i1, i2, j1, j2 = _trim(a, b, i1, i2, j1, j2)
        # A changed modifier belongs to the garment that follows it: take the phrase up to its garment.
        while (i2 < len(a) and j2 < len(b) and a[i2] == b[j2] and a[i1:i2] and a[i2 - 1] not in garment_tokens
               and a[i2 - 1] not in links and (a[i2] in garment_tokens or not _ends_phrase(a[i2], words))
               and i2 - i1 < 8):
            i2, j2 = i2 + 1, j2 + 1
        shown = _shown(a, b, i1, i2, j1, j2)
        old, new = a[i1:i2], b[j1:j2]
        og, ng = _garments(old, words), _garments(new, words)
        if not og:
            out.append(f"{shown}: changes words that are not a garment phrase; {type_name} corrections change a "
                       "garment into another")
            continue
        if len(ng) > len(og):
            out.append(f"{shown}: adds a garment; a garment may change into another or be dropped, not added")
            continue
        oc, nc = [t for t in old if t in colours], [t for t in new if t in colours]
        if not _subsequence(nc, oc):
            out.append(f"{shown}: colours may not change for {type_name} (correct them as a colour error)")
            continue
        bad = [t for t in old + new if t not in garment_tokens and t not in links and t not in colours
               and (_ends_phrase(t, words) or t in preps or t in persons)]
        if bad:
            out.append(f"{shown}: only a garment phrase (its modifiers and the garment) may change for {type_name} "
                       f"(not: {_q(bad)})")
            continue
        if not ng:
            if any(t not in links for t in new) or not (old[0] in links or old[-1] in links):
                out.append(f"{shown}: only a whole garment phrase may be dropped, with the word that joins it on")
            continue
        if og == ng and "without" not in new and oc != nc:
            out.append(f"{shown}: drops a colour and keeps the garment; that is not a type of clothing correction")
    return out


def _ends_phrase(t: str, words: CorrectionWords) -> bool:
    return _is_boundary(t, words) or _is_strong_verb(t, words) or t in ("is", "are")


def _subsequence(small: list, big: list) -> bool:
    it = iter(big)
    return all(x in it for x in small)


# --------------------------------------------------------------------------- number

def _singular(t: str, words: CorrectionWords) -> str:
    irregular = {}
    for entry in words.word_class("irregular_plurals"):
        parts = entry.split()
        if len(parts) == 2:
            irregular[parts[1]] = parts[0]
    if t in irregular:
        return irregular[t]
    for suffix, repl in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x"), ("s", "")):
        if t.endswith(suffix) and len(t) > len(suffix) + 1:
            return t[: -len(suffix)] + repl
    return t


def _check_number(rule, edits, a, b, words, type_name):
    """Number words change (a → two, a group of → three), with what agrees with them: the counted noun's
    plural (man → men), the verb (is → are), pronouns (its → their). Nothing else changes."""
    allowed = words.word_class("numbers") | words.word_class("number_agreement") | words.articles
    out = []
    for e in edits:
        old, new = [t.lower() for t in e.old], [t.lower() for t in e.new]
        stems_old = {_singular(t, words) for t in old}
        stems_new = {_singular(t, words) for t in new}
        bad = [t for t in old if t not in allowed and _singular(t, words) not in stems_new and _is_word(t)] + \
              [t for t in new if t not in allowed and _singular(t, words) not in stems_old and _is_word(t)]
        if bad:
            out.append(f"{_shown(list(e.old), list(e.new), 0, len(e.old), 0, len(e.new))}: only number words and "
                       f"the words that agree with them may change for {type_name} (not: {_q(bad)})")
    if not out and not any(t in words.word_class("numbers") or t in words.articles or t in ("group", "groups")
                           for e in edits for t in (*(x.lower() for x in e.old), *(x.lower() for x in e.new))):
        out.append(f"no number word changed; {type_name} corrections change how many (a → two, two → three)")
    return out


# --------------------------------------------------------------------------- position, stance: one word class

def _check_only(rule, edits, a, b, words, type_name):
    """Every changed word belongs to the rule's classes (spatial relations, postures), and something of the
    caption changes rather than only being added."""
    allowed = frozenset().union(*(words.word_class(c) for c in rule.classes)) | words.articles
    out = []
    for i1, i2, j1, j2 in _groups(edits, a, words, gap=0):
        i1, i2, j1, j2 = _trim(a, b, i1, i2, j1, j2)
        shown = _shown(a, b, i1, i2, j1, j2)
        if i1 == i2:
            out.append(f"{shown}: only adds words; correct the {type_name} the caption states instead")
            continue
        bad = [t for t in a[i1:i2] + b[j1:j2] if t not in allowed and _is_word(t)]
        if bad:
            what = " and ".join(c.replace("_", " ") for c in rule.classes)
            out.append(f"{shown}: only {what} words may change for {type_name} (not: {_q(bad)})")
    return out


# --------------------------------------------------------------------------- subjects and objects

_AGREEMENT = {"is", "are", "was", "were", "has", "have"}


def _check_entity(rule, edits, a, b, words, type_name):
    """One noun phrase into another, or dropped: no verb changes, no new clause, nothing only added, no phrase
    joined on beside it (an apple in the kitchen). With ``verb_with_object`` (a non-existent object) the object
    may also go with its verb: the phrase dropped where the sentence keeps its own verb (walks down the road
    carrying a briefcase → walks down the road), a verb alone in its place where the sentence needs one."""
    out = []
    entity = f"the {type_name.split()[-1]}"
    for i1, i2, j1, j2 in _groups(edits, a, words):
        i1, i2, j1, j2 = _trim(a, b, i1, i2, j1, j2)
        shown = _shown(a, b, i1, i2, j1, j2)
        if i1 == i2:
            out.append(f"{shown}: only adds words; correct the {type_name.split()[0]} entity the caption names instead")
            continue
        verbs = [t for t in a[i1:i2] + b[j1:j2] if t not in _AGREEMENT and _is_verb(t, words)]
        if verbs and rule.verb_with_object and _verb_with_its_object(a, i1, i2, words):
            out.extend(_absent_object(a, b, i1, i2, j1, j2, words))
            continue
        if verbs:
            out.append(f"{shown}: changes a verb ({_q(verbs)}); {type_name} corrections change the entity (a noun "
                       "phrase), not what it does")
            continue
        new_clause = _new_clause(a, b, i1, i2, j1, j2, words)
        if new_clause:
            out.append(f"{shown}: adds a new clause or sentence ({_q(new_clause)})")
            continue
        out.extend(_beyond(a, b, i1, i2, j1, j2, words, entity))
    return out


def _verb_with_its_object(a: list[str], i1: int, i2: int, words: CorrectionWords) -> bool:
    """The stretch is a verb and its object, nothing more (carrying a briefcase; not: carrying a bag and
    smiling)."""
    rest = a[i1 + 1:i2]
    return (i2 - i1 > 1 and _is_verb(a[i1], words) and not any(_is_verb(t, words) or _is_boundary(t, words)
                                                               or t == "and" for t in rest))


def _absent_object(a, b, i1, i2, j1, j2, words: CorrectionWords) -> list[str]:
    """A verb and its non-existent object, dropped or replaced by a verb alone (the study's "is holding a sign"
    → "is talking"): dropped when the sentence keeps a verb of its own (a participle phrase after the clause),
    replaced only when the verb is the sentence's own (after is/are, or a finite verb), which it cannot lose."""
    shown = _shown(a, b, i1, i2, j1, j2)
    needed = (i1 > 0 and a[i1 - 1] in ("is", "are", "was", "were", "be", "being")) or not any(
        a[i1].endswith(s) for s in words.word_class("verb_suffixes"))
    new = b[j1:j2]
    if not new:
        if needed:
            return [f"{shown}: dropping it leaves the sentence without its verb; put a verb alone in its place "
                    "(is holding a sign → is talking)"]
        return []
    if not all(_is_verb_form(t, words) or t in words.word_class("location_prepositions") for t in new):
        return [f"{shown}: changes a verb ({_q([a[i1]])}) into more than a verb; the object that is not there goes "
                "with its verb, and at most a verb alone takes their place"]
    if not needed:
        return [f"{shown}: the sentence keeps its own verb without '{a[i1]}': drop the phrase instead of putting "
                "another verb in its place"]
    return []


def _check_extra(rule, edits, a, b, words, type_name):
    """The extra entity is removed; only words that agree with what is left may be added (are → is)."""
    agreement = {"is", "are", "was", "were", "has", "have", "a", "an", "the", "his", "her", "its", "their", "and",
                 ",", "."}
    out = []
    for e in edits:
        gone = [t.lower() for t in e.old]
        # what is left agrees with fewer: are → is, sit → sits
        added = [t.lower() for t in e.new if t.lower() not in agreement and not any(_agrees(t.lower(), o, words)
                                                                                     for o in gone)]
        if added:
            out.append(f"'{' '.join(e.old) or '∅'}' → '{' '.join(e.new)}': adds words ({_q(added)}); an extra "
                       f"{type_name.split()[-1]} is corrected by removing it")
    if not out and not any(t.lower() not in agreement for e in edits for t in e.old):
        out.append(f"nothing is removed; an extra {type_name.split()[-1]} is corrected by removing it")
    return out


def _agrees(new: str, old: str, words: CorrectionWords) -> bool:
    """``new`` is ``old`` with another number ending (sit → sits, go → goes, man → men)."""
    return new in (old + "s", old + "es") or old in (new + "s", new + "es") or _singular(new, words) == _singular(old, words)


_CHECKS = {"verb_phrase": _check_activity, "location_phrase": _check_scene, "garment": _check_garment,
           "number": _check_number, "only": _check_only, "entity": _check_entity, "extra": _check_extra}
