"""The guards' word lists and rules, read from guidelines/correction_words.toml."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import InputError
from ..taxonomy import GUIDELINES_DIR, read_toml, taxonomy
from .tokens import _lower_tokens

WORDS_FILE = GUIDELINES_DIR / "correction_words.toml"
#: The kinds of rule a word-list file may name (see guidelines/correction_words.toml).
RULE_KINDS = ("class", "pairs", "verb_phrase", "location_phrase", "garment", "number", "only", "entity", "extra",
              "limit")


@dataclass(frozen=True)
class Rule:
    """One guard rule from the word-list file."""

    name: str
    kind: str  # "class" | "pairs" | "verb_phrase" | "location_phrase"
    words: frozenset = frozenset()  # single-token class members
    phrases: frozenset = frozenset()  # class members as token tuples (single ones included)
    pairs: frozenset = frozenset()  # frozensets of two words
    free: frozenset = frozenset()
    anchors: frozenset = frozenset()
    expand: bool = False
    # class rules: other words of a changed phrase may change with it (a garment's modifiers), and a whole
    # phrase of the class may be dropped (a garment that is not there).
    modifiers: bool = False
    drop: bool = False
    # what a colour must belong to: "garment", "not_garment" or "" (anything)
    target: str = ""
    # word classes of other types that may not appear or change under this rule (colours, garments, numbers),
    # and the swap rules of other types whose swaps it may not make (gender, age)
    keep: tuple = ()
    keep_pairs: tuple = ()
    # the "only" rule: the [classes] every changed word must belong to
    classes: tuple = ()
    # pairs rules: a plural may be joined by its partner ("men" -> "men and women")
    join_partner: bool = False
    # entity rules: an object that is not there may go with its verb, replaced by a verb alone ("is carrying a
    # surfboard" -> "is walking"), as an activity fix takes its object along
    verb_with_object: bool = False


@dataclass(frozen=True)
class CorrectionWords:
    """The guard configuration: rules, which type uses which, and shared settings."""

    rules: dict
    type_rules: dict
    max_changed_words: int | None  # None: no cap on changed words (the default)
    articles: frozenset
    reorder_ignore: frozenset
    classes: dict = field(default_factory=dict)  # word classes the phrase rules read (verbs, prepositions …)

    def word_class(self, name: str) -> frozenset:
        """The words of a class of the [classes] table (empty when the file has none)."""
        return self.classes.get(name, frozenset())

    def rule_for(self, error_type: str) -> Rule | None:
        """The rule of an error type, or None when the type uses the changed-word limit."""
        name = self.type_rules.get(error_type)
        return self.rules[name] if name else None


def load_correction_words(path: Path | str = WORDS_FILE) -> CorrectionWords:
    """Read and check a correction word-list file (format: guidelines/correction_words.toml)."""
    path = Path(path)
    data = read_toml(path, "correction word lists")
    meta = data.get("meta", {})
    rules: dict[str, Rule] = {}
    for name, raw in data.items():
        if name in ("meta", "rules", "classes") or not isinstance(raw, dict):
            continue
        kind = raw.get("rule")
        if kind not in RULE_KINDS:
            raise InputError(f"rule must be one of {', '.join(RULE_KINDS)}, not {kind!r}", str(path), f"[{name}]")
        source = data.get(raw["words_from"], {}) if "words_from" in raw else raw
        phrases = frozenset(tuple(_lower_tokens(w)) for w in source.get("words", ()))
        pairs = []
        for pair in raw.get("pairs", ()):
            if len(pair) != 2 or pair[0].lower() == pair[1].lower():
                raise InputError(f"a pair needs two different words: {pair!r}", str(path), f"[{name}]")
            pairs.append(frozenset(w.lower() for w in pair))
        rules[name] = Rule(name=name, kind=kind, words=frozenset(p[0] for p in phrases if len(p) == 1),
                           phrases=phrases, pairs=frozenset(pairs), free=frozenset(w.lower() for w in source.get("free", ())),
                           anchors=frozenset(w.lower() for w in raw.get("anchors", ())), expand=bool(source.get("expand", False)),
                           modifiers=bool(raw.get("modifiers", False)), drop=bool(raw.get("drop", False)),
                           target=str(raw.get("target", "")), keep=tuple(raw.get("keep", ())),
                           keep_pairs=tuple(raw.get("keep_pairs", ())), classes=tuple(raw.get("classes", ())),
                           join_partner=bool(raw.get("join_partner", False)),
                           verb_with_object=bool(raw.get("verb_with_object", False)))
    type_rules = dict(data.get("rules", {}))
    known = set(taxonomy().ids)
    for type_id, rule in type_rules.items():
        if type_id not in known:
            raise InputError(f"unknown error type id {type_id!r}", str(path), "[rules]")
        if rule not in rules:
            raise InputError(f"type {type_id!r} names a missing rule {rule!r}", str(path), "[rules]")
    cap = meta.get("max_changed_words")
    if cap is not None and (not isinstance(cap, int) or cap < 0):
        raise InputError(f"max_changed_words must be a whole number of 0 or more, not {cap!r}", str(path), "[meta]")
    # A class entry of several words ("living room") counts each of its words as a member too.
    classes = {name: frozenset(t for w in words for t in {w.lower(), *w.lower().split()})
               for name, words in data.get("classes", {}).items()}
    # The classes named after a rule's words: colours and garments (what other types keep).
    for cls, rule_name in (("colours", "colour"), ("garments", "clothing")):
        if rule_name in rules:
            classes.setdefault(cls, rules[rule_name].words)
            classes.setdefault(cls + "_phrases", rules[rule_name].phrases)
    for name, rule in rules.items():
        for cls in rule.keep + rule.classes:
            if cls not in classes:
                raise InputError(f"rule {name!r} names a missing word class {cls!r}", str(path), f"[{name}]")
        for other in rule.keep_pairs:
            if other not in rules or rules[other].kind != "pairs":
                raise InputError(f"rule {name!r} keeps a missing swap rule {other!r}", str(path), f"[{name}]")
    return CorrectionWords(rules=rules, type_rules=type_rules, max_changed_words=cap,
                           articles=frozenset(a.lower() for a in meta.get("articles", ("a", "an"))),
                           reorder_ignore=frozenset(w.lower() for w in meta.get("reorder_ignore", ())),
                           classes=classes)


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
    cap = f" Change at most {limit} words." if limit is not None else ""
    if rule is None:
        return "Change only what the error needs, and do not move words to another place in the sentence." + cap
    text = _RULE_TEXT.get(rule.name) or _RULE_TEXT.get(rule.kind)
    if text:
        return text + (cap if rule.kind not in ("class", "pairs") else "")
    return f"Only changes allowed by the '{rule.name}' word list."


#: What each rule allows, in one or two sentences (by rule name, else by kind); docs/correction.md has the table.
_RULE_TEXT = {
    "colour": ("Only colour words may change, and only into other colour words, for clothing (patterns are not "
               "colours); two colours may swap places. The colour of hair or of a thing is Color, not this type."),
    "object_colour": ("Only colour words may change, into other colour words, for something that is not clothing "
                      "(a garment's colour is Color of clothing)."),
    "gender": ("Only swap gender words for their partner of the same age and number (man ↔ woman, boy ↔ girl, "
               "his ↔ her, and the plurals and pronouns that go with them); never man ↔ girl. A group of both may "
               "be named: men → men and women."),
    "age": ("Only swap age words for their partner of the same gender (man ↔ boy, woman ↔ girl); age adjectives "
            "such as young or old may change next to a person word."),
    "garment": ("Change a garment phrase into another garment phrase (its modifiers may change with it, its colours "
                "stay), merge garments into fewer, or drop a garment that is not there (or say it is absent: "
                "without a shirt); never add a garment or change a colour."),
    "verb_phrase": ("Change the verb, with its object (and the place it took) where needed: holding a sign → "
                    "talking; keep the subject; do not only add words, add a second activity or change the place "
                    "into another place."),
    "location_phrase": ("Change the place: the location phrase (in a kitchen → on a beach, its preposition "
                        "included), drop it, or a place word into a place word (A kitchen with … → A bathroom with "
                        "…); do not add a place, or change what a verb is about (looking at a camera)."),
    "number": ("Change number words (a → two, a group of → three) and what agrees with them (man → men, is → "
               "are); nothing else."),
    "position": "Change only spatial relations (in → next to, on → under), with their articles.",
    "stance": "Change only the posture (standing → sitting, with down or up and the verb form that agrees).",
    "entity": ("Change the wrong entity into another noun phrase, or drop it; keep the verbs and every other "
               "type's words (colours, garments, numbers, gender, age)."),
    "absent_object": ("Change the object that is not there into another noun phrase, or drop it — with its verb, "
                      "replaced by a verb alone, where the verb cannot stay without it (is carrying a surfboard → "
                      "is walking); keep every other type's words."),
    "extra": "Remove the extra entity (and a woman in a white shirt → nothing); add nothing but agreement (are → is).",
    "other": "Change only what the error needs: no word moved, and no other type's words changed.",
}
