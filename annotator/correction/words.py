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
RULE_KINDS = ("class", "pairs", "verb_phrase", "location_phrase")


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
            raise InputError(f"rule must be 'class', 'pairs', 'verb_phrase' or 'location_phrase', not {kind!r}",
                             str(path), f"[{name}]")
        phrases = frozenset(tuple(_lower_tokens(w)) for w in raw.get("words", ()))
        pairs = []
        for pair in raw.get("pairs", ()):
            if len(pair) != 2 or pair[0].lower() == pair[1].lower():
                raise InputError(f"a pair needs two different words: {pair!r}", str(path), f"[{name}]")
            pairs.append(frozenset(w.lower() for w in pair))
        rules[name] = Rule(name=name, kind=kind, words=frozenset(p[0] for p in phrases if len(p) == 1),
                           phrases=phrases, pairs=frozenset(pairs), free=frozenset(w.lower() for w in raw.get("free", ())),
                           anchors=frozenset(w.lower() for w in raw.get("anchors", ())), expand=bool(raw.get("expand", False)),
                           modifiers=bool(raw.get("modifiers", False)), drop=bool(raw.get("drop", False)))
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
    classes = {name: frozenset(w.lower() for w in words) for name, words in data.get("classes", {}).items()}
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
    if rule.name == "colour":
        return ("Only colour words may change, and only into other colour words (patterns are not colours); "
                "two colours may swap places.")
    if rule.name == "gender":
        return ("Only swap gender words for their partner of the same age and number (man ↔ woman, boy ↔ girl, "
                "his ↔ her, and the plurals and pronouns that go with them); never man ↔ girl.")
    if rule.name == "age":
        return "Only swap age words for their partner of the same gender (man ↔ boy, woman ↔ girl); age adjectives such as young or old may change next to a person word."
    if rule.name == "clothing":
        return ("Change a garment phrase into another garment phrase (its modifiers may change with it, its colours "
                "stay), or drop a garment that is not there.")
    if rule.kind == "verb_phrase":
        return ("Change the verb phrase: the verb, and its object with it where needed (holding a sign → talking); "
                "keep the subject and the location, and do not reorder the sentence." + cap)
    if rule.kind == "location_phrase":
        return ("Change the location phrase only (in a kitchen → on a beach); keep the rest, and do not reorder "
                "the sentence." + cap)
    return f"Only changes allowed by the '{rule.name}' word list."
