"""Automatic error detectors: a score in [0, 1] per caption and error type, with the words behind it.

Each detector compares what a caption says with what the project knows about
the image: its references, and the labels (and WordNet sense names) of its
gold boxes. The rules follow the taxonomy's definitions (guidelines/taxonomy.toml):

* **gender, age, type of clothing, colour of clothing, colour, stance,
  activity, position, scene**: a caption word of that class that no
  reference or box label supports. Its score is ``unsupported`` (0.5) raised
  towards ``contradicted`` (1.0) by the share of references that use another
  word of the class, i.e. agree on something else. A colour within a few words
  before a garment is a clothing colour, otherwise a colour. Stance counts only
  for animate subjects (a pagoda "stands"), stance and activity only when the
  subject exists at all.
* **subject / object non-existent and similar**: entity nouns (the first
  entity of the caption is its subject, later ones are objects) that nothing
  supports. With a sibling in the word lists' hierarchy present (a cat where
  the caption says dog) the error is "similar", otherwise "non-existent". A
  more general word than what is present ("animal" for a cat) is supported;
  a more specific one is consistent.
* **extra subject / extra object**: an entity repeated after "and" ("a cup
  and a cup") that no reference counts twice, or joined by "and" and absent.
* **number**: the count a caption gives an entity (a count word before it,
  else its plural or singular form) that no reference gives the same entity.
* **wrong subject**: the caption's subject is in the image, but (almost) no
  reference has it as its subject.
* **wrong object**: an entity that is present, governed by a verb that no
  reference supports ("holding a flag" where the flag is only in the background).
* **unrelated**: low similarity to the references (:func:`reference_similarity`)
  or three or more other types flagged.
* **inaccurate**: the strongest type score of the caption.

The "other" type has no detector (its score is always 0). Object
hallucination is also summarised per system as CHAIR-i and CHAIR-s
(:meth:`Detections.chair`, Rohrbach et al. 2018): the share of entity
mentions, and of captions, naming something absent (non-existent or similar).

All captions of all systems are scored at once with numpy; nothing here is
per-caption Python except the lexicon lookup of each distinct word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..taxonomy import ERROR_TYPE_IDS
from .lexicon import Lexicon, MANY, PLURAL, lexicon
from .tokens import Classes, Marks, Tokens, contains, find_classes, lookup, tokenise, unique, unique_counts

#: The overall target: the caption is inaccurate.
INACCURATE = "inaccurate"
#: Types with a detector, in taxonomy order ("other" has none).
DETECTED_TYPES = tuple(t for t in ERROR_TYPE_IDS if t != "other")
#: Score columns of :class:`Detections`: every taxonomy type, then the overall target.
SCORE_COLUMNS = tuple(ERROR_TYPE_IDS) + (INACCURATE,)
_COL = {t: i for i, t in enumerate(SCORE_COLUMNS)}
#: The detectors' signature as a judge (annotator.judges): what they are and where their words come from.
SIGNATURE = {"model": "built-in word-list detectors", "prompt": "guidelines/detector_words.toml", "k": 1}


@dataclass(frozen=True)
class Evidence:
    """What a project holds about one image: reference texts and gold box labels (with sense names)."""

    references: tuple[str, ...]
    box_labels: tuple[str, ...] = ()


def evidence_of_item(item) -> Evidence:
    """The evidence of a :class:`annotator.model.Item`: its references, box labels and their synset lemmas."""
    labels = []
    for box in item.boxes:
        labels.append(box.label)
        if box.synset:
            labels.append(box.synset.split(".")[0].replace("_", " "))
    return Evidence(tuple(r.text for r in item.references), tuple(labels))


@dataclass(frozen=True)
class ChairScore:
    """CHAIR object hallucination of a set of captions (Rohrbach et al. 2018)."""

    chair_i: float  # hallucinated entity mentions / all entity mentions
    chair_s: float  # captions with a hallucinated entity / all captions
    mentions: int
    hallucinated: int
    captions: int
    captions_hallucinating: int


@dataclass(frozen=True)
class Detections:
    """Detector scores of many captions (compute once, read many times).

    ``scores[i, j]`` is the score of caption ``i`` for column
    ``SCORE_COLUMNS[j]``; ``similarity[i]`` its reference similarity. The
    words behind each score are kept as token spans and read with
    :meth:`triggers`.
    """

    scores: np.ndarray
    similarity: np.ndarray
    entity_mentions: np.ndarray  # per caption
    entity_hallucinated: np.ndarray  # per caption
    _tokens: tuple[Tokens, ...] = field(repr=False)  # one per block of images
    _trigger_block: np.ndarray = field(repr=False)
    _trigger_caption: np.ndarray = field(repr=False)
    _trigger_column: np.ndarray = field(repr=False)
    _trigger_start: np.ndarray = field(repr=False)
    _trigger_end: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return self.scores.shape[0]

    def score(self, column: str) -> np.ndarray:
        """Scores of every caption for one type id (or ``"inaccurate"``)."""
        return self.scores[:, _COL[column]]

    def triggers(self, caption: int, column: str | None = None) -> dict[str, list[str]]:
        """The words that raised each score of one caption: ``{type id: [words, ...]}``.

        With ``column`` only that type (``"inaccurate"`` gives all words of all types).
        """
        lo, hi = np.searchsorted(self._trigger_caption, [caption, caption + 1])
        out: dict[str, list[str]] = {}
        for k in range(lo, hi):
            j = int(self._trigger_column[k])
            col = SCORE_COLUMNS[j]
            if (column not in (None, INACCURATE) and col != column) or self.scores[caption, j] <= 0:
                continue
            block = self._tokens[int(self._trigger_block[k])]
            words = block.words(int(self._trigger_start[k]), int(self._trigger_end[k]))
            got = out.setdefault(col, [])
            if words not in got:
                got.append(words)
        if column == INACCURATE:
            return {INACCURATE: [w for ws in out.values() for w in ws]} if out else {}
        return out

    def trigger_positions(self, caption: int) -> list[tuple[str, int, int]]:
        """Where the words behind caption ``caption``'s scores stand: ``(type id, lo, hi)`` with ``lo:hi`` the
        positions among the caption's own detector tokens (lower-cased, split at punctuation), whatever the
        score (annotator.estimate.span_eval maps them onto the caption's words)."""
        lo, hi = np.searchsorted(self._trigger_caption, [caption, caption + 1])
        out = []
        for k in range(lo, hi):
            block = self._tokens[int(self._trigger_block[k])]
            start = int(self._trigger_start[k])
            first = int(block.start[int(block.text[start])])
            out.append((SCORE_COLUMNS[int(self._trigger_column[k])], start - first, int(self._trigger_end[k]) - first))
        return out

    def flags(self, threshold: float = 0.5) -> np.ndarray:
        """Boolean flags (score >= threshold) per caption and column."""
        return self.scores >= threshold

    def frame(self) -> pd.DataFrame:
        """One row per caption: a column per score, then the reference similarity."""
        df = pd.DataFrame(self.scores, columns=list(SCORE_COLUMNS))
        df["similarity"] = self.similarity
        return df

    def subset(self, rows: slice | np.ndarray) -> "Detections":
        """The detections of some captions (a slice, index array or mask), renumbered from 0 in that order."""
        index = np.arange(len(self))[rows]
        new = np.full(len(self), -1, dtype=np.int64)
        new[index] = np.arange(len(index))
        mapped = new[self._trigger_caption]
        keep = mapped >= 0
        order = np.lexsort((self._trigger_start[keep], self._trigger_column[keep], mapped[keep]))
        return Detections(self.scores[index], self.similarity[index], self.entity_mentions[index],
                          self.entity_hallucinated[index], self._tokens, self._trigger_block[keep][order],
                          mapped[keep][order], self._trigger_column[keep][order], self._trigger_start[keep][order],
                          self._trigger_end[keep][order])

    def chair(self, rows: np.ndarray | None = None) -> ChairScore:
        """CHAIR-i and CHAIR-s over all captions, or over the caption indices (or mask) ``rows``."""
        m = self.entity_mentions if rows is None else self.entity_mentions[rows]
        h = self.entity_hallucinated if rows is None else self.entity_hallucinated[rows]
        mentions, hallucinated = int(m.sum()), int(h.sum())
        captions, bad = int(len(m)), int((h > 0).sum())
        return ChairScore(hallucinated / mentions if mentions else 0.0, bad / captions if captions else 0.0,
                          mentions, hallucinated, captions, bad)


class _Keys:
    """A set of integer keys with multiplicities, looked up many at a time."""

    def __init__(self, keys: np.ndarray):
        self.keys, self.counts = unique_counts(keys)

    def count(self, q: np.ndarray) -> np.ndarray:
        """How often each query key was added (0 if never)."""
        hit, i = lookup(self.keys, q)
        return np.where(hit, self.counts[i] if len(self.counts) else 0, 0)

    def has(self, q: np.ndarray) -> np.ndarray:
        """Whether each query key is in the set."""
        return contains(self.keys, q)


class _Tree:
    """A hierarchy (concepts, age groups) as arrays: every value's ancestors, nearest first."""

    def __init__(self, hierarchy):
        n = len(hierarchy.names)
        chains = [hierarchy.ancestors(i) for i in range(n)]
        self.size = n
        self.anc = np.full((n, max((len(c) for c in chains), default=1)), -1, dtype=np.int64)
        for i, chain in enumerate(chains):
            self.anc[i, :len(chain)] = chain
        self.parent = np.array(hierarchy.parents, dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        self.root = np.array([c[-1] for c in chains], dtype=np.int64)

    def closure(self, item: np.ndarray, value: np.ndarray, stride: int | None = None) -> np.ndarray:
        """Keys item * stride + a for each value's ancestors a (itself included).

        Values at or above ``size`` (word stems among concepts) have no ancestors and give their own key.
        """
        stride = stride or self.size
        item = np.asarray(item, dtype=np.int64)
        value = np.asarray(value, dtype=np.int64)
        inside = value < self.size
        keys = [item[~inside] * stride + value[~inside]]
        anc = self.anc[value[inside]]
        it = item[inside]
        for k in range(anc.shape[1]):
            ok = anc[:, k] >= 0
            keys.append(it[ok] * stride + anc[ok, k])
        return np.concatenate(keys)

    def status(self, direct: _Keys, closed: _Keys, item: np.ndarray, value: np.ndarray):
        """For values said of items: (supported, more specific than what is there, similar).

        Supported: the value or a narrower one is there ("animal" for a cat).
        More specific: a broader value is there ("toddler" where the evidence says "child").
        Similar: neither, but a sibling is there (its parent is supported: a dog where there is a cat).
        """
        item = np.asarray(item, dtype=np.int64)
        supported = closed.has(item * self.size + value)
        specific = np.zeros(len(value), dtype=bool)
        for k in range(1, self.anc.shape[1]):
            a = self.anc[value, k]
            ok = a >= 0
            specific[ok] |= direct.has(item[ok] * self.size + a[ok])
        par = self.parent[value]
        similar = np.zeros(len(value), dtype=bool)
        ok = par >= 0
        similar[ok] = closed.has(item[ok] * self.size + par[ok])
        specific &= ~supported
        similar &= ~supported & ~specific
        return supported, specific, similar


# Count codes as bits, so all the counts references give one entity fit in one integer.
_COUNT_CODES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, PLURAL, MANY)
_COUNT_BIT = np.zeros(MANY + 1, dtype=np.int64)
for _i, _code in enumerate(_COUNT_CODES):
    _COUNT_BIT[_code] = 1 << _i


def _compatible(caption_code: int, ref_code: int) -> bool:
    """Whether a reference's count agrees with a caption's ("two" with "dogs", "three" with "a group of")."""
    c, r = caption_code, ref_code
    if r == PLURAL:
        return c >= 2
    if r == MANY:
        return c in (PLURAL, MANY) or 3 <= c <= 10
    if r == 1 or c == 1:
        return c == r
    return c == r or c == PLURAL or (c == MANY and r >= 3)


# For each caption count code: the bits of the reference counts that agree with it.
_AGREES = np.zeros(MANY + 1, dtype=np.int64)
for _c in _COUNT_CODES:
    _AGREES[_c] = sum(1 << i for i, r in enumerate(_COUNT_CODES) if _compatible(_c, r))
_MORE_THAN_ONE = sum(1 << i for i, r in enumerate(_COUNT_CODES) if r != 1)


class _Mentions(NamedTuple):
    """The captions' entity mentions and what the evidence says of each (arrays aligned with ``cap``)."""

    cap: Marks                # the mentions
    cap_plural: np.ndarray    # each mention is a plural word
    item: np.ndarray          # its item
    text: np.ndarray          # its text
    is_subject: np.ndarray    # it is its caption's subject (the caption's first entity)
    supported: np.ndarray     # the evidence names it, or a narrower concept
    specific: np.ndarray      # the evidence names only a broader concept
    similar: np.ndarray       # the evidence names a sibling (a similar thing)
    absent: np.ndarray        # neither supported nor more specific


class _Scorer:
    """The working state of one :func:`detect` call (see the module documentation for the rules).

    Texts are numbered in the order they were tokenised (grouped by image);
    per-text arrays are indexed by that number, scores by caption in the
    caller's order (``caption_texts[i]`` is the text of caption i).
    """

    def __init__(self, tokens: Tokens, cls: Classes, lex: Lexicon, text_item: np.ndarray, text_role: np.ndarray,
                 n_items: int, caption_texts: np.ndarray):
        self.t, self.c, self.lex = tokens, cls, lex
        self.text_item, self.text_role = text_item, text_role
        self.n_items, self.n_captions, self.n_texts = n_items, len(caption_texts), tokens.n_texts
        self.caption_texts = caption_texts
        self.cap_of_text = np.full(self.n_texts, -1, dtype=np.int64)
        self.cap_of_text[caption_texts] = np.arange(len(caption_texts))
        self.tok_item = text_item.astype(np.int64)[tokens.text]
        self.tok_role = text_role[tokens.text]
        self.concepts = _Tree(lex.concepts)
        self.nc = self.concepts.size
        self.kind_entity = np.array([k == "entity" for k in lex.concepts.kinds], dtype=bool)
        self.kind_scene = np.array([k == "scene" for k in lex.concepts.kinds], dtype=bool)
        self.n_refs = np.bincount(text_item[text_role == 1], minlength=n_items)
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []
        self.ends: list[np.ndarray] = []

    # -- helpers -------------------------------------------------------------------------------------------------

    def split(self, marks: Marks) -> tuple[Marks, Marks]:
        """(caption marks, evidence marks: references and box labels)."""
        is_caption = self.tok_role[marks.pos] == 0
        return marks.select(is_caption), marks.select(~is_caption)

    def item(self, pos: np.ndarray) -> np.ndarray:
        return self.tok_item[pos]

    def keys(self, pos: np.ndarray, value: np.ndarray, size: int) -> np.ndarray:
        return self.tok_item[pos] * size + value

    def ref_share(self, marks: Marks) -> np.ndarray:
        """Per item: share of its references with at least one mark of the class."""
        refs = marks.pos[self.tok_role[marks.pos] == 1]
        texts = unique(self.t.text[refs])
        with_class = np.bincount(self.text_item[texts], minlength=self.n_items)
        return np.divide(with_class, self.n_refs, out=np.zeros(self.n_items), where=self.n_refs > 0)

    def caption_of(self, pos: np.ndarray) -> np.ndarray:
        return self.cap_of_text[self.t.text[pos]]

    def add(self, column: str, pos: np.ndarray, end: np.ndarray, score: np.ndarray) -> None:
        """Record scores of caption token spans for one column."""
        keep = score > 0
        if not keep.any():
            return
        pos, end, score = pos[keep], end[keep], score[keep]
        self.rows.append(self.caption_of(pos))
        self.cols.append(np.full(len(pos), _COL[column], dtype=np.int64))
        self.vals.append(score.astype(np.float64))
        self.starts.append(pos)
        self.ends.append(end)

    def unsupported_score(self, supported: np.ndarray, share: np.ndarray) -> np.ndarray:
        s = self.lex.scores
        return np.where(supported, 0.0, s["unsupported"] + (s["contradicted"] - s["unsupported"]) * share)

    def neighbours(self, pos: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(inside the same text, position) of the word k places away (clipped: sorted queries stay sorted)."""
        q = np.clip(pos + k, 0, len(self.t.tok) - 1)
        return (self.t.text[q] == self.t.text[pos]) & (q == pos + k), q

    def find_before(self, pos: np.ndarray, target: Marks, window: int, stop: tuple[Marks, ...],
                    after: bool = False) -> np.ndarray:
        """Whether a ``target`` mark stands within ``window`` words before (or after) each position,
        with no ``stop`` mark in between."""
        found = np.zeros(len(pos), dtype=bool)
        blocked = np.zeros(len(pos), dtype=bool)
        for k in range(1, window + 1):
            inside, q = self.neighbours(pos, k if after else -k)
            hit = inside & ~blocked & target.has(q)
            found |= hit
            blocked |= hit | ~inside
            for m in stop:
                blocked |= m.has(q)
        return found

    def simple_class(self, column: str, marks: Marks, size: int, applies: np.ndarray | None = None) -> None:
        """A class supported by the same value anywhere in the item's references or box labels.

        ``applies`` (per text) limits the rule to some captions.
        """
        cap, ev = self.split(marks)
        support = _Keys(self.keys(ev.pos, ev.value, size))
        ok = support.has(self.keys(cap.pos, cap.value, size))
        score = self.unsupported_score(ok, self.ref_share(marks)[self.item(cap.pos)])
        if applies is not None:
            score = np.where(applies[self.t.text[cap.pos]], score, 0.0)
        self.add(column, cap.pos, cap.end, score)

    def hierarchy_class(self, column: str, marks: Marks, tree: _Tree) -> tuple:
        """A class whose values form a hierarchy: a broader word is supported, a narrower one consistent."""
        cap, ev = self.split(marks)
        direct = _Keys(self.keys(ev.pos, ev.value, tree.size))
        closed = _Keys(tree.closure(self.item(ev.pos), ev.value))
        supported, specific, similar = tree.status(direct, closed, self.item(cap.pos), cap.value)
        score = self.unsupported_score(supported, self.ref_share(marks)[self.item(cap.pos)])
        score[specific] = self.lex.scores["more_specific"]
        if column:
            self.add(column, cap.pos, cap.end, score)
        return cap, ev, supported, specific, similar

    def counts_of(self, ents: Marks, plural: np.ndarray) -> np.ndarray:
        """The count code of each entity mark: its own count word, one shortly before it, else its number."""
        c = self.c
        code = np.where(plural, PLURAL, 1).astype(np.int64)
        own = c.count.at(ents.pos)
        found = own >= 0
        code[found] = own[found]
        blocked = found.copy()
        for k in range(1, self.lex.count_lookback + 1):
            inside, q = self.neighbours(ents.pos, -k)
            word = np.where(inside, c.count.at(q), -1)
            take = ~blocked & (word >= 0)
            code[take] = word[take]
            blocked |= take | ~inside | c.noun.has(q)
        return code

    def first_per_text(self, pos: np.ndarray) -> np.ndarray:
        """Mask of the first of each text's positions (positions sorted)."""
        text = self.t.text[pos]
        first = np.ones(len(pos), dtype=bool)
        first[1:] = text[1:] != text[:-1]
        return first

    # -- the detectors -------------------------------------------------------------------------------------------

    def run(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        lex, c = self.lex, self.c
        self.simple_class("gender", c.gender, 2)
        self.age()
        self.colours()
        self.simple_class("clothing_type", c.clothing, len(lex.clothing_names))
        self.symbols = self.symbol_support()
        subject_exists = self.entities()
        self.verbs(subject_exists)
        self.simple_class("position", c.relation, len(lex.relation_names), applies=subject_exists)
        self.hierarchy_class("scene", c.noun.select(self.kind_scene[c.noun.value]), self.concepts)
        self.similarity = reference_similarity(self)[self.caption_texts]
        scores = np.zeros((self.n_captions, len(SCORE_COLUMNS)))
        if self.rows:
            rows, cols, vals = (np.concatenate(x) for x in (self.rows, self.cols, self.vals))
            np.maximum.at(scores, (rows, cols), vals)
        self.unrelated(scores)
        scores[:, _COL[INACCURATE]] = scores[:, :len(ERROR_TYPE_IDS)].max(axis=1)
        return scores, self.similarity, self.mentions, self.hallucinated

    def age(self) -> None:
        lex, c = self.lex, self.c
        # adjectives count only right before a person word
        people = c.noun.select(self.concepts.root[c.noun.value] == lex.concepts.index("person")) \
            if "person" in lex.concepts.names else c.noun.select(np.zeros(len(c.noun), dtype=bool))
        adj = c.age_adjective
        adj = adj.select(self.find_before(adj.pos, people, lex.age_window, (), after=True))
        pos = np.concatenate([c.age.pos, adj.pos])
        order = np.argsort(pos, kind="stable")
        marks = Marks(pos[order], np.concatenate([c.age.value, adj.value])[order],
                      np.concatenate([c.age.end, adj.end])[order], len(self.t.tok))
        self.hierarchy_class("age", marks, _Tree(lex.ages))

    def colours(self) -> None:
        lex, c = self.lex, self.c
        col = c.colour
        on_clothing = self.find_before(col.pos, c.clothing, lex.colour_window, (c.noun,), after=True)
        n = len(lex.colour_names)
        _, ev = self.split(col)
        support = _Keys(self.keys(ev.pos, ev.value, n))
        for column, marks in (("clothing_color", col.select(on_clothing)), ("color", col.select(~on_clothing))):
            cap, _ = self.split(marks)
            ok = support.has(self.keys(cap.pos, cap.value, n))
            self.add(column, cap.pos, cap.end, self.unsupported_score(ok, self.ref_share(marks)[self.item(cap.pos)]))

    def entities(self) -> np.ndarray:
        """Subject/object non-existent, similar, extra, number, wrong subject and wrong object; CHAIR counts.

        Returns per text whether its subject exists (or it has none), for the stance, activity and position rules.
        """
        c = self.c
        is_entity = self.kind_entity[c.noun.value]
        ents, plural = c.noun.select(is_entity), c.plural[is_entity]
        m, subject_exists = self._entity_presence(ents, plural)
        is_cap = self.tok_role[ents.pos] == 0
        bits, naming = self._reference_counts(ents.select(~is_cap), plural[~is_cap])
        self._number(m, bits, naming)
        self._extra(m, bits)
        self._wrong_subject(m, ents)
        self._wrong_object(m)
        return subject_exists

    def _entity_presence(self, ents: Marks, plural: np.ndarray) -> tuple[_Mentions, np.ndarray]:
        """Which of the captions' entity mentions the evidence supports (any kind of evidence: entities, parts,
        scenes): subject/object non-existent and similar, CHAIR's counts. Returns the mentions and, per text,
        whether its subject exists."""
        c, nc, tree = self.c, self.nc, self.concepts
        is_cap = self.tok_role[ents.pos] == 0
        cap = ents.select(is_cap)
        all_cap, all_ev = self.split(c.noun)
        direct = _Keys(self.keys(all_ev.pos, all_ev.value, nc))
        closed = _Keys(tree.closure(self.item(all_ev.pos), all_ev.value))
        item = self.item(cap.pos)
        supported, specific, similar = tree.status(direct, closed, item, cap.value)
        absent = ~supported & ~specific
        text = self.t.text[cap.pos]
        is_subject = self.first_per_text(cap.pos)
        subject_value = np.full(self.n_texts, -1, dtype=np.int64)
        subject_value[text[is_subject]] = cap.value[is_subject]
        self.subject_value = subject_value
        base = self.unsupported_score(~absent, self.ref_share(ents)[item])
        for column, mask in (("subject_similar", is_subject & similar),
                             ("subject_nonexistent", is_subject & absent & ~similar),
                             ("object_similar", ~is_subject & similar),
                             ("object_nonexistent", ~is_subject & absent & ~similar)):
            self.add(column, cap.pos[mask], cap.end[mask], base[mask])
        self.mentions = np.bincount(text, minlength=self.n_texts)[self.caption_texts]
        self.hallucinated = np.bincount(text[absent], minlength=self.n_texts)[self.caption_texts]
        subject_exists = np.ones(self.n_texts, dtype=bool)
        subject_exists[text[is_subject]] = ~(absent & ~similar)[is_subject]
        return _Mentions(cap, plural[is_cap], item, text, is_subject, supported, specific, similar, absent), \
            subject_exists

    def _reference_counts(self, ev: Marks, ev_plural: np.ndarray):
        """Every count the references give an entity (or a narrower one), as bits per (item, concept), and the
        references naming each entity at all. Returns ``bits(item, concept)`` and the naming (text, concept)
        keys."""
        nc, tree = self.nc, self.concepts
        refs = ev.select(self.tok_role[ev.pos] == 1)
        ref_plural = ev_plural[self.tok_role[ev.pos] == 1]
        ref_bits = _COUNT_BIT[np.minimum(self.counts_of(refs, ref_plural), MANY)]
        depth = tree.anc.shape[1]
        anc = tree.anc[refs.value]
        ok = anc.ravel() >= 0
        ref_keys = (np.repeat(self.item(refs.pos), depth) * nc + anc.ravel())[ok]
        bits_of_key = np.repeat(ref_bits, depth)[ok]
        order = np.argsort(ref_keys, kind="stable")
        ref_keys, bits_of_key = ref_keys[order], bits_of_key[order]
        starts = np.flatnonzero(np.concatenate([[True], ref_keys[1:] != ref_keys[:-1]])) if len(ref_keys) else \
            np.zeros(0, dtype=np.int64)
        count_keys = ref_keys[starts]
        count_bits = np.bitwise_or.reduceat(bits_of_key, starts) if len(starts) else np.zeros(0, dtype=np.int64)
        # references naming the entity at all (each reference once)
        per_ref = unique((np.repeat(self.t.text[refs.pos], depth) * nc + anc.ravel())[ok])
        naming = _Keys(self.text_item[per_ref // nc] * nc + per_ref % nc)

        def bits(item: np.ndarray, concept: np.ndarray) -> np.ndarray:
            hit, i = lookup(count_keys, item * nc + np.maximum(concept, 0))
            return np.where(hit & (concept >= 0), count_bits[i] if len(count_bits) else 0, 0)

        return bits, naming

    def _number(self, m: _Mentions, bits, naming: _Keys) -> None:
        """Number: a count the caption gives an entity that no reference's count for it agrees with."""
        nc, tree, cap, item = self.nc, self.concepts, m.cap, m.item
        cap_code = self.counts_of(cap, m.cap_plural)
        look = np.where(m.supported, cap.value, np.where(m.similar, tree.parent[cap.value], -1))
        ref_counts = bits(item, look)
        conflict = (ref_counts != 0) & ((ref_counts & _AGREES[np.minimum(cap_code, MANY)]) == 0)
        n_naming = naming.count(item * nc + np.maximum(look, 0))
        share = np.divide(n_naming, self.n_refs[item], out=np.zeros(len(cap)), where=self.n_refs[item] > 0)
        self.add("number", cap.pos[conflict], cap.end[conflict], self.unsupported_score(~conflict, share)[conflict])

    def _extra(self, m: _Mentions, bits) -> None:
        """Extra: an entity right after "and" (nothing but modifiers between) that repeats an earlier one
        which no reference counts twice, or that is absent; in the subject part or the object part."""
        c, cap, text = self.c, m.cap, m.text
        after_and = self.find_before(cap.pos, c.conjunction, 3, (c.noun, c.activity, c.stance))
        order = np.lexsort((cap.pos, cap.value, text))
        repeat = np.zeros(len(cap), dtype=bool)
        repeat[order[1:]] = (text[order][1:] == text[order][:-1]) & (cap.value[order][1:] == cap.value[order][:-1])
        counted_twice = (bits(m.item, cap.value) & _MORE_THAN_ONE) != 0
        # a verb before the conjunction puts the conjunct in the object part of the caption
        verbs = np.sort(np.concatenate([self.split(c.activity)[0].pos, self.split(c.stance)[0].pos]))
        first_verb = np.full(self.n_texts, np.iinfo(np.int64).max)
        keep = self.first_per_text(verbs)
        first_verb[self.t.text[verbs[keep]]] = verbs[keep]
        in_subject = (cap.value == self.subject_value[text]) & (first_verb[text] > cap.pos)
        s = self.lex.scores
        extra = np.where(after_and & repeat & ~counted_twice, s["repeated"],
                         np.where(after_and & m.absent & ~repeat, s["unsupported"], 0.0))
        self.add("subject_extra", cap.pos[in_subject], cap.end[in_subject], extra[in_subject])
        self.add("object_extra", cap.pos[~in_subject], cap.end[~in_subject], extra[~in_subject])

    def _wrong_subject(self, m: _Mentions, ents: Marks) -> None:
        """Wrong subject: present, but (almost) no reference makes it, or a broader or narrower word, its subject."""
        nc, tree, cap, is_subject = self.nc, self.concepts, m.cap, m.is_subject
        ref_ents = ents.select(self.tok_role[ents.pos] == 1)
        rsub = ref_ents.select(self.first_per_text(ref_ents.pos))
        ritem = self.item(rsub.pos)
        sub_closed = _Keys(tree.closure(ritem, rsub.value))
        sub_direct = _Keys(ritem * nc + rsub.value)
        refs_with_subject = np.bincount(ritem, minlength=self.n_items)
        sv, sitem = cap.value[is_subject], m.item[is_subject]
        agree = sub_closed.count(sitem * nc + sv)
        for k in range(1, tree.anc.shape[1]):
            a = tree.anc[sv, k]
            ok = a >= 0
            agree[ok] += sub_direct.count(sitem[ok] * nc + a[ok])
        n_sub = refs_with_subject[sitem]
        share = np.divide(agree, n_sub, out=np.ones(len(sv)), where=n_sub > 0)
        wrong = np.where(m.supported[is_subject] & (n_sub >= 2), np.clip(1.0 - 2.0 * share, 0.0, 1.0), 0.0)
        self.add("subject_wrong", cap.pos[is_subject], cap.end[is_subject], wrong)

    def _wrong_object(self, m: _Mentions) -> None:
        """Wrong object: a present object governed by an unsupported verb (the verbs' support is kept for the
        activity rule)."""
        c, cap = self.c, m.cap
        cap_acts, act_ev = self.split(c.activity)
        n_act = max(len(c.activity_names), 1)
        act_ok = _Keys(self.keys(act_ev.pos, act_ev.value, n_act)).has(
            self.keys(cap_acts.pos, cap_acts.value, n_act)) | self.symbols.has(
            self.keys(cap_acts.pos, c.symbol[cap_acts.pos], c.n_symbols))
        self.act_ok = (cap_acts, act_ok)
        bad_verbs = cap_acts.select(~act_ok)
        governed = self.find_before(cap.pos, bad_verbs, 3, (c.noun, c.activity))
        wrong_object = ~m.is_subject & (m.supported | m.specific) & governed
        self.add("object_wrong", cap.pos[wrong_object], cap.end[wrong_object],
                 np.full(int(wrong_object.sum()), self.lex.scores["unsupported"]))

    def symbol_support(self) -> _Keys:
        """(item, symbol) keys of all words of the evidence, with the parents of concepts."""
        sym = self.c.symbol
        ev = np.flatnonzero((self.tok_role != 0) & (sym >= 0))
        return _Keys(self.concepts.closure(self.tok_item[ev], sym[ev], self.c.n_symbols))

    def verbs(self, subject_exists: np.ndarray) -> None:
        c, lex = self.c, self.lex
        cap_acts, act_ok = self.act_ok
        applies = subject_exists[self.t.text[cap_acts.pos]]
        share = self.ref_share(c.activity)[self.item(cap_acts.pos)]
        self.add("activity", cap_acts.pos, cap_acts.end, np.where(applies, self.unsupported_score(act_ok, share), 0.0))
        animate = np.isin(self.concepts.root, list(lex.animate_roots))
        sv = self.subject_value
        animate_subject = np.where(sv >= 0, animate[np.maximum(sv, 0)], True)
        self.simple_class("stance", c.stance, max(len(lex.stance_names), 1), applies=subject_exists & animate_subject)

    def unrelated(self, scores: np.ndarray) -> None:
        """Unrelated from low similarity or many flagged types; a caption beyond repair gets no other types."""
        s = self.lex.scores
        floor = float(s["unrelated_similarity"])
        by_similarity = np.clip(1.0 - self.similarity / floor, 0.0, 1.0) if floor > 0 else np.zeros(len(scores))
        others = [i for i, t in enumerate(SCORE_COLUMNS) if t not in ("unrelated", INACCURATE)]
        n_types = (scores[:, others] >= 0.5).sum(axis=1)
        k = int(s["unrelated_types"])
        # k types flagged on a caption that is not close to the references: 0.5, each further type another 0.25
        by_types = np.where((n_types >= k) & (self.similarity < 2 * floor),
                            np.minimum(1.0, 0.5 + 0.25 * (n_types - k)), 0.0)
        unrelated = np.maximum(by_similarity, by_types)
        scores[:, _COL["unrelated"]] = unrelated
        # annotators tick "unrelated" instead of the other types of a caption that is beyond repair
        scores[:, others] *= (1.0 - unrelated)[:, None]
        # the words behind it: the caption's content words that nothing supports
        sym = self.c.symbol
        cap_pos, supported = self.caption_content
        pos = cap_pos[~supported]
        caption = self.caption_of(pos)
        flagged = unrelated[caption] > 0
        pos, caption = pos[flagged], caption[flagged]
        self.rows.append(caption)
        self.cols.append(np.full(len(pos), _COL["unrelated"], dtype=np.int64))
        self.vals.append(unrelated[caption])
        self.starts.append(pos)
        self.ends.append(pos + 1)


def reference_similarity(scorer: _Scorer) -> np.ndarray:
    """Per text: a unigram F-measure of its content words against its image's references.

    Precision is the share of the text's content words (each occurrence; a
    noun counts as its concept, other words as their stem; stopwords left
    out) that some reference or box label of the image supports (a broader
    word is supported by a narrower one). Recall is the share of the words
    the references agree on (used by at least ``consensus`` references) that
    the text covers. This is the one place that decides what "similar to the
    references" means for the unrelated detector.
    """
    t, c = scorer.t, scorer.c
    n, sym, tree = c.n_symbols, c.symbol, scorer.concepts
    # consensus: symbols used by enough references (each reference counted once)
    refs = np.flatnonzero((scorer.tok_role == 1) & (sym >= 0))
    per_ref = unique(t.text[refs].astype(np.int64) * n + sym[refs])
    by_item = _Keys(scorer.text_item[per_ref // n] * n + per_ref % n)
    consensus = by_item.keys[by_item.counts >= scorer.lex.consensus]
    k_item = consensus // n
    n_consensus = np.bincount(k_item, minlength=scorer.n_items)
    cover = _Keys(tree.closure(k_item, consensus % n, n))
    # caption side: every content word
    cap = np.flatnonzero((scorer.tok_role == 0) & (sym >= 0))
    ctext = t.text[cap]
    q = scorer.tok_item[cap] * n + sym[cap]
    supported = scorer.symbols.has(q)
    scorer.caption_content = (cap, supported)  # the unrelated detector names the unsupported ones
    size = scorer.n_texts
    total = np.bincount(ctext, minlength=size).astype(float)
    hit = np.bincount(ctext, weights=supported, minlength=size)
    covered = np.bincount(ctext, weights=cover.count(q), minlength=size)
    k_total = n_consensus[scorer.text_item].astype(float)
    precision = np.divide(hit, total, out=np.zeros(size), where=total > 0)
    recall = np.divide(np.minimum(covered, k_total), k_total, out=np.zeros(size), where=k_total > 0)
    denom = precision + recall
    return np.divide(2 * precision * recall, denom, out=np.zeros(size), where=denom > 0)


#: Texts per block: images are scored a block at a time, which bounds memory and keeps arrays in cache.
BLOCK_TEXTS = 120_000


def detect(captions: Sequence[str], items: Sequence[int] | np.ndarray, evidence: Sequence[Evidence],
           lex: Lexicon | None = None, block_texts: int = BLOCK_TEXTS) -> Detections:
    """Score every caption for every error type.

    ``captions[i]`` describes the image ``evidence[items[i]]``; captions of
    several systems may share the same evidence. Returns a
    :class:`Detections` with one row per caption. Images are handled in
    blocks of about ``block_texts`` texts (captions, references, box labels);
    an image's texts always share a block, so the result does not depend on it.
    """
    lex = lex or lexicon()
    items = np.asarray(items, dtype=np.int64)
    n = len(captions)
    if len(items) != n:
        raise ValueError(f"{n} captions but {len(items)} item indices")
    if n and (items.min() < 0 or items.max() >= len(evidence)):
        raise ValueError("an item index is outside the evidence list")
    ref_texts = [r for e in evidence for r in e.references]
    ref_item = np.repeat(np.arange(len(evidence)), [len(e.references) for e in evidence])
    box_texts = [b for e in evidence for b in e.box_labels]
    box_item = np.repeat(np.arange(len(evidence)), [len(e.box_labels) for e in evidence])
    texts = list(captions) + ref_texts + box_texts
    text_item = np.concatenate([items, ref_item, box_item]).astype(np.int64)
    text_role = np.concatenate([np.zeros(n, np.int8), np.ones(len(ref_texts), np.int8),
                                np.full(len(box_texts), 2, np.int8)])
    # Texts of one image side by side: every lookup by (image, value) then reads memory in order.
    order = np.argsort(text_item, kind="stable")
    sorted_item = text_item[order]
    # block ends at image boundaries, about block_texts texts apart
    image_end = np.flatnonzero(np.append(sorted_item[1:] != sorted_item[:-1], True)) + 1
    cuts = np.unique(image_end[np.minimum(np.searchsorted(image_end, np.arange(block_texts, len(order) + block_texts,
                                                                               block_texts)), len(image_end) - 1)]) \
        if len(order) else np.zeros(0, dtype=np.int64)
    scores = np.zeros((n, len(SCORE_COLUMNS)))
    similarity = np.zeros(n)
    mentions = np.zeros(n, dtype=np.int64)
    hallucinated = np.zeros(n, dtype=np.int64)
    blocks, found = [], []
    memo: dict = {}
    lo = 0
    for hi in cuts.tolist():
        ids = order[lo:hi]
        local_captions = np.flatnonzero(ids < n)
        global_captions = ids[local_captions]
        tokens = tokenise([texts[i] for i in ids.tolist()])
        scorer = _Scorer(tokens, find_classes(tokens, lex, memo), lex, text_item[ids], text_role[ids], len(evidence),
                         local_captions)
        sc, sim, men, hal = scorer.run()
        scores[global_captions], similarity[global_captions] = sc, sim
        mentions[global_captions], hallucinated[global_captions] = men, hal
        if scorer.rows:
            rows, cols, starts, ends = (np.concatenate(x) for x in
                                        (scorer.rows, scorer.cols, scorer.starts, scorer.ends))
            found.append((np.full(len(rows), len(blocks)), global_captions[rows], cols, starts, ends))
        blocks.append(tokens)
        lo = hi
    if found:
        block, rows, cols, starts, ends = (np.concatenate(x) for x in zip(*found))
        order = np.lexsort((starts, cols, rows))
        block, rows, cols, starts, ends = block[order], rows[order], cols[order], starts[order], ends[order]
    else:
        block = rows = cols = starts = ends = np.zeros(0, dtype=np.int64)
    return Detections(scores, similarity, mentions, hallucinated, tuple(blocks), block, rows, cols, starts, ends)
