"""The word lists the error detectors read, loaded from ``guidelines/``.

Two files feed a :class:`Lexicon`:

* ``guidelines/detector_words.toml``: entities, scenes and body parts with
  their parents, age groups, postures, activities, spatial relations, count
  words, irregular forms, the detector scores and the similarity stopwords;
* ``guidelines/correction_words.toml``: the colour and garment classes and
  the gender pairs that the conservative-correction guards use, so one list
  of colours serves both.

Text is matched in one normal form everywhere (:func:`normal_words`): lower
case, split on everything that is not a letter or a digit. Verbs are matched
on a light stem (:func:`stem`); nouns on their written form plus the plural
the rules below give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import InputError
from ..taxonomy import GUIDELINES_DIR, read_toml

DETECTOR_WORDS_FILE = GUIDELINES_DIR / "detector_words.toml"
CORRECTION_WORDS_FILE = GUIDELINES_DIR / "correction_words.toml"

#: Count code for a plural noun with no count word ("dogs").
PLURAL = 50
#: Count code for "many", "a group of", "thousands of" ...
MANY = 100

_SPLIT = re.compile(r"[^\w]+|_+")
_VOWELS = set("aeiou")


def normal_words(text: str) -> list[str]:
    """Lower-case words of a text, split on everything but letters and digits."""
    return [w for w in _SPLIT.split(text.lower()) if w]


def stem(word: str) -> str:
    """A light verb stem, the same for "sit", "sits", "sitting" and "sat"-free regular forms.

    Irregular forms are mapped by the lexicon before this runs. The rules strip
    -ies/-ied (to -y), -es after a sibilant, -s (not -ss), -ing and -ed, undo a
    doubled final consonant ("running", "stopped") and drop a final -e, so that
    "smile", "smiles", "smiling" and "smiled" all become "smil".
    """
    w = word
    if len(w) > 4 and (w.endswith("ies") or w.endswith("ied")):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 3 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif len(w) > 2 and w.endswith("s") and not w.endswith("ss") and not w.endswith("us"):
        w = w[:-1]
    else:
        return w[:-1] if len(w) > 3 and w.endswith("e") else w
    if len(w) > 2 and w[-1] == w[-2] and w[-1] not in _VOWELS and w[-1] not in "lsz":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def plural_forms(noun: str, irregular: dict[str, str]) -> list[str]:
    """Plural spellings of a (single or last) noun word: the irregular one, else the regular rules."""
    if noun in irregular:
        return [irregular[noun]]
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return [noun + "es"]
    if len(noun) > 2 and noun.endswith("y") and noun[-2] not in _VOWELS:
        return [noun[:-1] + "ies"]
    if noun.endswith("fe"):
        return [noun + "s", noun[:-2] + "ves"]
    if noun.endswith("f"):
        return [noun + "s", noun[:-1] + "ves"]
    return [noun + "s"]


def verb_forms(base: str, irregular_past: dict[str, list[str]]) -> list[str]:
    """Spellings of a verb used in phrases ("take off"): base, -s, -ing, -ed and irregular forms."""
    forms = {base, base + "s", base + "es", base + "ing", base + "ed", base + "d"}
    if base.endswith("e"):
        forms.add(base[:-1] + "ing")
    if len(base) > 2 and base[-1] not in _VOWELS and base[-2] in _VOWELS:
        forms.add(base + base[-1] + "ing")
        forms.add(base + base[-1] + "ed")
    forms.update(irregular_past.get(base, ()))
    return sorted(forms)


@dataclass(frozen=True)
class Hierarchy:
    """Named values with optional parents (entities, scenes, age groups)."""

    names: tuple[str, ...]
    parents: tuple[int, ...]  # index of the parent, -1 for a root
    kinds: tuple[str, ...] = ()

    def index(self, name: str) -> int:
        """Position of a value by name (KeyError if unknown)."""
        return self.names.index(name)

    def ancestors(self, i: int) -> list[int]:
        """The value itself and its parents up to the root, nearest first."""
        out = []
        while i >= 0 and i not in out:
            out.append(i)
            i = self.parents[i]
        return out

    def root(self, i: int) -> int:
        """The topmost ancestor of a value."""
        return self.ancestors(i)[-1]


@dataclass(frozen=True)
class Lexicon:
    """Everything the detectors know about words (see the module documentation).

    Word tables map a normal-form word to a value index; ``phrases`` maps a
    tuple of words to ``(class, value, anchor)`` where anchor says which word
    of the phrase carries it ("last" for nouns, "first" otherwise).
    """

    concepts: Hierarchy  # entities, body parts and scenes in one hierarchy (kinds say which)
    ages: Hierarchy
    nouns: dict  # word -> (concept index, is plural)
    clothing: dict  # word -> garment index
    clothing_names: tuple[str, ...]
    colours: dict  # word -> colour index
    colour_names: tuple[str, ...]
    gender: dict  # word -> 0 male, 1 female
    age_nouns: dict  # word -> age group index
    age_adjectives: dict  # word -> age group index
    stances: dict  # stem -> posture index
    stance_names: tuple[str, ...]
    activity_stems: frozenset
    activity_same: dict  # stem -> canonical stem
    not_activity_stems: frozenset
    ing_nouns: frozenset
    irregular_verbs: dict  # form -> base
    relations: dict  # single word -> relation index
    relation_names: tuple[str, ...]
    counts: dict  # word -> count code (1..10, MANY)
    phrases: dict  # tuple of words -> list of (class, value, anchor)
    stopwords: frozenset
    not_entities: frozenset
    animate_roots: frozenset  # concept indices
    scores: dict
    colour_window: int
    age_window: int
    count_lookback: int
    consensus: int
    _stems: dict = field(default_factory=dict, compare=False, repr=False)

    def stem_of(self, word: str) -> str:
        """The verb stem of a word after irregular forms (cached)."""
        s = self._stems.get(word)
        if s is None:
            s = stem(self.irregular_verbs.get(word, word))
            self._stems[word] = s
        return s


def _words(entry: str) -> tuple[str, ...]:
    return tuple(normal_words(entry))


def _hierarchy(tables: list[tuple[str, dict]], where: str) -> tuple[Hierarchy, dict[str, list[str]]]:
    """Build one hierarchy from ``name = {parent, words}`` tables of several kinds."""
    names: list[str] = []
    kinds: list[str] = []
    raw_parents: list[str | None] = []
    words: dict[str, list[str]] = {}
    for kind, table in tables:
        for name, spec in table.items():
            if not isinstance(spec, dict):
                continue
            if name in words:
                raise InputError(f"{name!r} is defined twice", where)
            names.append(name)
            kinds.append(kind)
            raw_parents.append(spec.get("parent"))
            words[name] = [name, *spec.get("words", [])]
    index = {n: i for i, n in enumerate(names)}
    parents = []
    for name, parent in zip(names, raw_parents):
        if parent is not None and parent not in index:
            raise InputError(f"{name!r} has an unknown parent {parent!r}", where)
        parents.append(index[parent] if parent is not None else -1)
    return Hierarchy(tuple(names), tuple(parents), tuple(kinds)), words


#: several-word entries: words → [(class, value, anchor)], one entry a class
Phrases = dict[tuple[str, ...], list]


def load_lexicon(path: Path | str = DETECTOR_WORDS_FILE, correction_path: Path | str = CORRECTION_WORDS_FILE) -> Lexicon:
    """Read the detector word lists (and the correction word classes) into a :class:`Lexicon`."""
    data = read_toml(Path(path), "detector word list")
    corr = read_toml(Path(correction_path), "detector word list")
    where = str(path)
    phrases: Phrases = {}
    irregular_plurals = dict(data.get("nouns", {}).get("irregular_plurals", {}))
    colour_data, age_data, stance_data = data.get("colour", {}), data.get("age", {}), data.get("stance", {})

    garments = _garments_and_colours(data, corr, irregular_plurals, phrases)
    gender: dict[str, int] = {}
    for male, female in corr.get("gender", {}).get("pairs", []):
        gender.setdefault(male, 0)
        gender.setdefault(female, 1)
    nouns = _nouns(data, where, irregular_plurals, garments["clothing"], garments["colours"], phrases)
    ages = _ages(age_data, where)
    verbs = _stances_and_activities(data, phrases)
    relations = _relations(data, phrases)
    counts = {}
    for word, value in data.get("number", {}).get("counts", {}).items():
        counts[word] = MANY if value == "many" else int(value)

    concepts = nouns["concepts"]
    animate = frozenset(concepts.index(r) for r in stance_data.get("animate_roots", []) if r in concepts.names)
    scores = {"unsupported": 0.5, "contradicted": 1.0, "more_specific": 0.25, "repeated": 1.0,
              "unrelated_similarity": 0.25, "unrelated_types": 3}
    scores.update(data.get("scores", {}))
    return Lexicon(
        **garments, **nouns, **ages, **verbs, **relations, gender=gender, counts=counts, phrases=phrases,
        stopwords=frozenset(data.get("similarity", {}).get("stopwords", [])),
        animate_roots=animate, scores=scores,
        colour_window=int(colour_data.get("attach_window", 3)),
        age_window=int(age_data.get("attach_window", 2)),
        count_lookback=int(data.get("number", {}).get("lookback", 3)),
        consensus=int(data.get("similarity", {}).get("consensus", 2)),
    )


def _add_phrase(phrases: Phrases, words: tuple[str, ...], cls: str, value, anchor: str) -> None:
    """Enter a phrase of several words for ``cls`` (the first entry of a class for those words stays)."""
    entries = phrases.setdefault(words, [])
    if not any(e[0] == cls for e in entries):
        entries.append((cls, value, anchor))


def _word_class(phrases: Phrases, cls: str, entries: list[str], same: list[list[str]], anchor: str,
                irregular: dict[str, str] | None) -> tuple[tuple[str, ...], dict[str, int]]:
    """Names and word table of a class whose spellings of one thing (``same``) share a value.

    Entries of several words become phrases; with ``irregular`` given, plurals are added.
    """
    canon = {_words(e): _words(group[0]) for group in same for e in group}
    names: list[tuple[str, ...]] = []
    index: dict[tuple[str, ...], int] = {}
    table: dict[str, int] = {}
    for entry in entries:
        words = _words(entry)
        head = canon.get(words, words)
        value = index.setdefault(head, len(names))
        if value == len(names):
            names.append(head)
        forms = [words]
        if irregular is not None and not words[-1].endswith("s"):
            forms += [words[:-1] + (p,) for p in plural_forms(words[-1], irregular)]
        for form in forms:
            if len(form) == 1:
                table.setdefault(form[0], value)
            else:
                _add_phrase(phrases, form, cls, value, anchor)
    return tuple(" ".join(n) for n in names), table


def _garments_and_colours(data: dict, corr: dict, irregular_plurals: dict[str, str], phrases: Phrases) -> dict:
    """The clothing and colour classes (the Lexicon fields of that name): garments are the correction class and
    extras; colours the correction class minus modifiers."""
    clothing_data, colour_data = data.get("clothing", {}), data.get("colour", {})
    clothing_names, clothing = _word_class(
        phrases, "clothing",
        list(corr.get("clothing", {}).get("words", [])) + list(clothing_data.get("extra", [])),
        clothing_data.get("same", []), "last", irregular_plurals)
    not_hues = set(colour_data.get("not_hues", []))
    colour_names, colours = _word_class(
        phrases, "colour", [e for e in corr.get("colour", {}).get("words", []) if e not in not_hues]
        + [e for g in colour_data.get("same", []) for e in g], colour_data.get("same", []), "first", None)
    return {"clothing": clothing, "clothing_names": clothing_names, "colours": colours, "colour_names": colour_names}


def _nouns(data: dict, where: str, irregular_plurals: dict[str, str], clothing: dict[str, int],
           colours: dict[str, int], phrases: Phrases) -> dict:
    """Entities, body parts and scenes as one hierarchy (so "water" supports "lake" by the same rule as "animal"
    and "cat"), and every noun's concept and plurality: the Lexicon fields concepts, nouns, not_entities."""
    concepts, concept_words = _hierarchy(
        [("entity", data.get("entity", {})), ("part", data.get("part", {})), ("scene", data.get("scene", {}))], where)
    not_entities = frozenset(data.get("nouns", {}).get("not_entities", []))
    # A listed word is plural when it is an irregular plural or the regular plural of another listed word.
    singulars = {w for ws in concept_words.values() for e in ws for w in _words(e)[-1:]}
    regular_plural = {p for w in singulars for p in plural_forms(w, {}) if p != w}
    irregular_plural = set(irregular_plurals.values()) - set(irregular_plurals)
    nouns: dict[str, tuple[int, bool]] = {}
    generated: dict[str, tuple[int, bool]] = {}
    for i, name in enumerate(concepts.names):
        for entry in concept_words[name]:
            words = _words(entry)
            last = words[-1]
            if len(words) == 1:
                if last not in clothing and last not in colours:
                    nouns.setdefault(last, (i, last in irregular_plural or last in regular_plural))
            else:
                _add_phrase(phrases, words, "noun", i, "last")
            for p in plural_forms(last, irregular_plurals):
                if p == last:
                    continue
                if len(words) == 1:
                    generated.setdefault(p, (i, True))
                else:
                    _add_phrase(phrases, words[:-1] + (p,), "noun", i, "last")
    for word, value in generated.items():
        if word not in nouns and word not in clothing and word not in colours:
            nouns[word] = value
    for word in not_entities:
        nouns.pop(word, None)
    return {"concepts": concepts, "nouns": nouns, "not_entities": not_entities}


def _ages(age_data: dict, where: str) -> dict:
    """Age groups: nouns give a group; adjectives only next to a person word (the Lexicon fields ages, age_nouns,
    age_adjectives)."""
    ages, age_words = _hierarchy([("age", {k: v for k, v in age_data.items() if k != "adjectives"})], where)
    age_nouns = {w: i for i, name in enumerate(ages.names) for w in age_words[name]}
    age_adjectives = {w: ages.index(g) for w, g in age_data.get("adjectives", {}).items()}
    return {"ages": ages, "age_nouns": age_nouns, "age_adjectives": age_adjectives}


def _stances_and_activities(data: dict, phrases: Phrases) -> dict:
    """Stances and activities by verb stem, irregular verbs, and the words that are not activities (the Lexicon
    fields of those names)."""
    irregular_verbs = dict(data.get("verbs", {}).get("irregular", {}))
    irregular_past: dict[str, list[str]] = {}
    for form, base in irregular_verbs.items():
        irregular_past.setdefault(base, []).append(form)

    def vstem(w: str) -> str:
        return stem(irregular_verbs.get(w, w))

    stance_data = data.get("stance", {})
    stance_names = tuple(g[0] for g in stance_data.get("groups", []))
    stances = {vstem(w): i for i, g in enumerate(stance_data.get("groups", [])) for w in g}

    act = data.get("activity", {})
    activity_same: dict[str, str] = {}
    for group in act.get("same", []):
        head = vstem(_words(group[0])[-1]) if len(_words(group[0])) == 1 else "_".join(_words(group[0]))
        for entry in group:
            words = _words(entry)
            if len(words) == 1:
                activity_same[vstem(words[0])] = head
            else:
                for first in verb_forms(words[0], irregular_past):
                    _add_phrase(phrases, (first,) + words[1:], "activity", head, "first")
    return {"stances": stances, "stance_names": stance_names, "irregular_verbs": irregular_verbs,
            "activity_same": activity_same, "activity_stems": frozenset(vstem(w) for w in act.get("verbs", [])),
            "not_activity_stems": frozenset(vstem(w) for w in act.get("not_activities", [])),
            "ing_nouns": frozenset(act.get("ing_nouns", []))}


def _relations(data: dict, phrases: Phrases) -> dict:
    """The positions (relations) by name: the Lexicon fields relations and relation_names."""
    relation_names = []
    relations: dict[str, int] = {}
    for name, entries in data.get("position", {}).items():
        k = len(relation_names)
        relation_names.append(name)
        for entry in entries:
            words = _words(entry)
            if len(words) == 1:
                relations.setdefault(words[0], k)
            else:
                _add_phrase(phrases, words, "relation", k, "first")
    return {"relations": relations, "relation_names": tuple(relation_names)}


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The lexicon of the installed guidelines (loaded once)."""
    return load_lexicon()
