"""Many texts as one flat array of word ids, and the word classes found in them.

The detectors look at every caption of every system at once, so text is
handled as numpy arrays rather than Python lists: all texts are normalised and
split in one pass (:func:`tokenise`), every distinct word is looked up in the
:class:`~annotator.estimate.lexicon.Lexicon` once, and each word class becomes
a sorted array of the token positions where it occurs with the value it has
there (:class:`Marks`). Phrases of the lexicon ("in front of", "space suit",
"taking off") are found with a key per word pair and replace the marks of
their words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np
import pandas as pd

from .lexicon import Lexicon

_TABLE = bytearray(range(256))
for _b in range(128):
    _c = chr(_b)
    if _c.isupper():
        _TABLE[_b] = ord(_c.lower())
    elif not _c.isalnum() and _b != 0x1F:
        _TABLE[_b] = 0x20
_TABLE = bytes(_TABLE)
# Non-ASCII punctuation that often sits inside English text; other non-ASCII characters stay part of words.
_UNICODE_PUNCT = "\u2018\u2019\u201a\u201c\u201d\u201e\u2010\u2011\u2012\u2013\u2014\u2026\u00a0\u00b7"


def unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an integer array (a plain sort: much faster than np.unique on big arrays)."""
    s = np.sort(np.asarray(a, dtype=np.int64), kind="stable" if len(a) < 2 else "quicksort")
    if len(s) == 0:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_counts(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of an integer array and how often each occurs."""
    s = np.sort(np.asarray(a, dtype=np.int64))
    if len(s) == 0:
        return s, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    counts = np.diff(np.append(starts, len(s)))
    return s[starts], counts


def lookup(sorted_keys: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found, index) of each query in a sorted array of distinct keys.

    Fast when the queries come (nearly) in order, as they do when texts are
    grouped by image: memory is then read in order.
    """
    q = np.asarray(q, dtype=np.int64)
    if len(sorted_keys) == 0 or len(q) == 0:
        return np.zeros(len(q), dtype=bool), np.zeros(len(q), dtype=np.int64)
    i = np.minimum(np.searchsorted(sorted_keys, q), len(sorted_keys) - 1)
    return sorted_keys[i] == q, i


def contains(sorted_keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether each query is in a sorted array of distinct keys."""
    return lookup(sorted_keys, q)[0]


@dataclass(frozen=True)
class Tokens:
    """Word ids of many texts in a row.

    ``tok[t]`` is the vocabulary id of token ``t``, ``text[t]`` the text it
    belongs to; the tokens of text ``i`` are ``start[i]:start[i+1]``.
    """

    vocab: tuple[str, ...]
    tok: np.ndarray
    text: np.ndarray
    start: np.ndarray

    @property
    def n_texts(self) -> int:
        """Number of texts."""
        return len(self.start) - 1

    def words(self, lo: int, hi: int) -> str:
        """The words of token positions ``lo:hi`` joined by spaces."""
        return " ".join(self.vocab[i] for i in self.tok[lo:hi])


_LOW_BYTES = np.array([0] + [(1 << (8 * i)) - 1 for i in range(1, 8)] + [(1 << 64) - 1], dtype=np.uint64)
_LONG = np.uint64(1 << 63)


def _word_ids(raw: bytes) -> tuple[np.ndarray, list[str]]:
    """Ids (first-appearance order) of the space-separated words of ``raw``, and the words.

    A word of up to eight bytes is its own key (its bytes read as one integer through an unaligned
    view of the buffer), so numbering the words is one integer hashing pass; the few longer words go
    through a dict.
    """
    n = len(raw)
    padded = np.frombuffer(raw + b" " * 8, dtype=np.uint8)
    inside = padded[:n] != 0x20
    change = np.flatnonzero(inside[1:] != inside[:-1]) + 1
    if n and inside[0]:
        change = np.concatenate([[0], change])
    if n and inside[-1]:
        change = np.append(change, n)
    starts, ends = change[0::2], change[1::2]
    lengths = ends - starts
    eight = np.ndarray(shape=(n,), dtype="<u8", buffer=padded, offset=0, strides=(1,))
    key = eight[starts] & _LOW_BYTES[np.minimum(lengths, 8)]
    long = np.flatnonzero(lengths > 8)
    long_words: dict[bytes, int] = {}
    if len(long):
        number = np.fromiter((long_words.setdefault(raw[a:b], len(long_words))
                              for a, b in zip(starts[long].tolist(), ends[long].tolist())),
                             dtype=np.uint64, count=len(long))
        key[long] = _LONG | number
    codes, uniques = pd.factorize(key)
    by_number = list(long_words)
    words = [(by_number[int(k) & ~(1 << 63)] if int(k) >> 63 else int(k).to_bytes(8, "little").rstrip(b"\0"))
             .decode("utf-8", "replace") for k in uniques]
    return codes.astype(np.int32), words


def tokenise(texts: list[str]) -> Tokens:
    """Lower-case and split all texts at once (same words as :func:`lexicon.normal_words` for ASCII text)."""
    joined = " \x1f ".join(texts)
    if joined.count("\x1f") != max(len(texts) - 1, 0):
        joined = " \x1f ".join(t.replace("\x1f", " ") for t in texts)
    joined = joined.lower()
    if not joined.isascii():
        for ch in _UNICODE_PUNCT:
            joined = joined.replace(ch, " ")
    codes, words = _word_ids(joined.encode("utf-8").translate(_TABLE))
    is_sep = codes == (words.index("\x1f") if "\x1f" in words else -1)
    text = np.cumsum(is_sep, dtype=np.int32)
    keep = ~is_sep
    tok = codes[keep]
    text = text[keep]
    lens = np.bincount(text, minlength=len(texts)) if len(texts) else np.zeros(0, dtype=np.int64)
    start = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=start[1:])
    return Tokens(tuple(words), tok, text, start)


@dataclass(frozen=True)
class Marks:
    """Sorted token positions of one word class with the value at each and the span of words that made it."""

    pos: np.ndarray  # int64, sorted
    value: np.ndarray  # int64
    end: np.ndarray  # int64, exclusive end of the words (a phrase spans several)
    n_tokens: int = 0  # length of the token array the positions point into
    _mask: list = field(default_factory=list, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.pos)

    def has(self, q: np.ndarray) -> np.ndarray:
        """Whether each position in ``q`` carries this class (a bitmap over all tokens, built on first use)."""
        if not self._mask:
            mask = np.zeros(max(self.n_tokens, int(self.pos[-1]) + 1 if len(self.pos) else 0), dtype=bool)
            mask[self.pos] = True
            self._mask.append(mask)
        mask = self._mask[0]
        q = np.asarray(q)
        out = np.zeros(len(q), dtype=bool)
        ok = (q >= 0) & (q < len(mask))
        out[ok] = mask[q[ok]]
        return out

    def at(self, q: np.ndarray, missing: int = -1) -> np.ndarray:
        """The value at each position in ``q`` (``missing`` where the class is absent)."""
        hit, i = lookup(self.pos, q)
        out = np.full(len(q), missing, dtype=np.int64)
        out[hit] = self.value[i[hit]]
        return out

    def select(self, keep: np.ndarray) -> "Marks":
        """The marks where ``keep`` is true."""
        return Marks(self.pos[keep], self.value[keep], self.end[keep], self.n_tokens)


class _ClassIndex:
    """Token positions of every word class at once: one pass over the tokens, then per class over the hits."""

    def __init__(self, tokens: Tokens, tables: list[np.ndarray], consumed: np.ndarray):
        bits = np.zeros(len(tables[0]) if tables else 0, dtype=np.int32)
        for k, table in enumerate(tables):
            bits |= (table >= 0).astype(np.int32) << k
        per_token = bits[tokens.tok]
        self.pos = np.flatnonzero(per_token)
        self.bits = per_token[self.pos]
        self.tokens = tokens
        self.consumed = np.zeros(len(tokens.tok), dtype=bool)
        self.consumed[consumed] = True

    def marks(self, k: int, table: np.ndarray, extra: list | None) -> Marks:
        """Marks of class ``k`` from its per-vocabulary values; with ``extra`` (a phrase class: a list of
        (positions, values, ends) arrays) phrase words lose their single-word marks and the phrases' marks are
        added."""
        return self.marks_with_flags(k, table, extra, None)[0]

    def marks_with_flags(self, k: int, table: np.ndarray, extra: list | None,
                         flag_table: np.ndarray | None) -> tuple[Marks, np.ndarray | None]:
        """:meth:`marks`, and a flag per mark: from ``flag_table`` (per vocabulary) for single words, from the
        fourth array of each ``extra`` entry for phrases."""
        pos = self.pos[(self.bits & (1 << k)) != 0]
        if extra is not None:
            pos = pos[~self.consumed[pos]]
        value = table[self.tokens.tok[pos]].astype(np.int64)
        end = pos + 1
        flags = None if flag_table is None else flag_table[self.tokens.tok[pos]]
        if extra:
            pos = np.concatenate([pos, *(e[0] for e in extra)])
            value = np.concatenate([value, *(e[1] for e in extra)])
            end = np.concatenate([end, *(e[2] for e in extra)])
            order = np.argsort(pos, kind="stable")
            pos, value, end = pos[order], value[order], end[order]
            if flags is not None:
                flags = np.concatenate([flags, *(e[3] for e in extra)])[order]
        return Marks(pos.astype(np.int64), value, end.astype(np.int64), len(self.tokens.tok)), flags


@dataclass(frozen=True)
class Classes:
    """The word classes of a token array (see :func:`find_classes`)."""

    noun: Marks  # concept index (entities, body parts, scenes)
    plural: np.ndarray  # bool per noun mark
    clothing: Marks
    colour: Marks
    gender: Marks
    age: Marks  # age-group nouns
    age_adjective: Marks
    stance: Marks
    activity: Marks  # index into activity_names
    relation: Marks
    count: Marks  # count code
    conjunction: Marks  # "and"
    symbol: np.ndarray  # per token: similarity symbol (concept or word stem), -1 for stopwords
    activity_names: tuple[str, ...]
    n_symbols: int


def _word_features(w: str, lex: Lexicon) -> tuple:
    """The classes of one word: (clothing, colour, noun, plural, gender, age, age adjective, relation, count,
    is "and", stem or None, posture, activity name or None); -1 where a class does not apply."""
    clothing = lex.clothing.get(w, -1)
    colour = lex.colours.get(w, -1) if clothing < 0 else -1
    noun, plural = lex.nouns.get(w, (-1, False)) if clothing < 0 and colour < 0 else (-1, False)
    count = lex.counts.get(w, -1)
    stem_ = None if (w in lex.stopwords or not w.isalpha() or count >= 0) else lex.stem_of(w)
    stance, activity = -1, None
    if noun < 0 and clothing < 0 and colour < 0 and stem_ is not None:
        if stem_ in lex.stances:
            stance = lex.stances[stem_]
        elif stem_ not in lex.not_activity_stems and w not in lex.ing_nouns and (
                stem_ in lex.activity_stems or stem_ in lex.activity_same or (w.endswith("ing") and len(w) > 4)):
            activity = lex.activity_same.get(stem_, stem_)
    return (clothing, colour, noun, plural, lex.gender.get(w, -1), lex.age_nouns.get(w, -1),
            lex.age_adjectives.get(w, -1), lex.relations.get(w, -1), count, w == "and", stem_, stance, activity)


def find_classes(tokens: Tokens, lex: Lexicon, memo: dict | None = None) -> Classes:
    """Look every distinct word up once and mark the classes of all token positions.

    ``memo`` (word -> classes) carries the lookups over from one call to the next.
    """
    words = _vocabulary_tables(tokens, lex, {} if memo is None else memo)
    phrases = _phrases_in_vocabulary(tokens, lex)
    start, length, which = _phrase_matches(tokens, phrases)
    extra, consumed_pos = _phrase_marks(tokens, lex, phrases, start, length, which, words.activity_index)
    tables = [words.noun, words.clothing, words.colour, words.gender, words.age, words.age_adj, words.stance,
              words.activity, words.relation, words.counts, words.conj]
    at = _ClassIndex(tokens, tables, consumed_pos)
    noun_marks, plural = at.marks_with_flags(0, words.noun, extra["noun"], words.noun_plural)
    return Classes(
        noun=noun_marks, plural=plural,
        clothing=at.marks(1, words.clothing, extra["clothing"]),
        colour=at.marks(2, words.colour, extra["colour"]),
        gender=at.marks(3, words.gender, None),
        age=at.marks(4, words.age, None),
        age_adjective=at.marks(5, words.age_adj, None),
        stance=at.marks(6, words.stance, []),
        activity=at.marks(7, words.activity, extra["activity"]),
        relation=at.marks(8, words.relation, extra["relation"]),
        count=at.marks(9, words.counts, None),
        conjunction=at.marks(10, words.conj, None),
        symbol=words.symbol_per_word[tokens.tok], activity_names=tuple(words.activity_index),
        n_symbols=len(lex.concepts.names) + words.n_stems,
    )


@dataclass
class _VocabularyTables:
    """Per vocabulary word: the value of each word class (-1 where it does not apply) and its similarity symbol.
    ``activity_index`` (activity name -> index) is still open: phrases add their activities to it."""

    noun: np.ndarray
    noun_plural: np.ndarray
    clothing: np.ndarray
    colour: np.ndarray
    gender: np.ndarray
    age: np.ndarray
    age_adj: np.ndarray
    relation: np.ndarray
    counts: np.ndarray
    conj: np.ndarray
    stance: np.ndarray
    activity: np.ndarray
    activity_index: dict[str, int]
    symbol_per_word: np.ndarray
    n_stems: int


def _vocabulary_tables(tokens: Tokens, lex: Lexicon, memo: dict) -> _VocabularyTables:
    """The class tables of every distinct word, each word looked up once (through ``memo``)."""
    V = len(tokens.vocab)
    features = [memo[w] if w in memo else memo.setdefault(w, _word_features(w, lex)) for w in tokens.vocab]
    columns = list(zip(*features)) if features else [()] * 13
    clothing, colour, noun = (np.array(columns[i], dtype=np.int64).reshape(V) for i in range(3))
    noun_plural = np.array(columns[3], dtype=bool).reshape(V)
    gender, age, age_adj, relation, counts = (np.array(columns[i], dtype=np.int64).reshape(V) for i in range(4, 9))
    conj = np.where(np.array(columns[9], dtype=bool).reshape(V), 0, -1)
    stance = np.array(columns[11], dtype=np.int64).reshape(V)
    activity_index: dict[str, int] = {}
    activity = np.array([-1 if a is None else activity_index.setdefault(a, len(activity_index)) for a in columns[12]],
                        dtype=np.int64).reshape(V)
    stems: dict[str, int] = {}
    n_concepts = len(lex.concepts.names)
    stem_id = np.array([-1 if st is None else n_concepts + stems.setdefault(st, len(stems)) for st in columns[10]],
                       dtype=np.int64).reshape(V)
    # Similarity symbols: a noun counts as its concept, so "puppy" matches "dog"; other words as their stem.
    symbol_per_word = np.where(noun >= 0, noun, stem_id)
    symbol_per_word[(noun < 0) & (stem_id < 0)] = -1
    return _VocabularyTables(noun, noun_plural, clothing, colour, gender, age, age_adj, relation, counts, conj,
                             stance, activity, activity_index, symbol_per_word, len(stems))


def _phrases_in_vocabulary(tokens: Tokens, lex: Lexicon) -> list[tuple[np.ndarray, list]]:
    """The lexicon's phrases whose words all occur in the tokens: (word ids, entries) each."""
    index = {w: i for i, w in enumerate(tokens.vocab)}
    phrases = []
    for words, entries in lex.phrases.items():
        ids = [index.get(w) for w in words]
        if all(i is not None for i in ids):
            phrases.append((np.array(ids, dtype=np.int64), entries))
    return phrases


def _phrase_matches(tokens: Tokens, phrases: list) -> tuple[list, list, list]:
    """Where each phrase occurs: lists of start positions, lengths and phrase numbers, one array per phrase.

    A key per word pair finds candidate starts; each phrase then checks its other words on its candidates only,
    all at once. A phrase does not cross from one text into the next."""
    V = len(tokens.vocab)
    tok = tokens.tok.astype(np.int64)
    found_start, found_len, found_phrase = [], [], []
    if not phrases or len(tok) <= 1:
        return found_start, found_len, found_phrase
    first_word = np.zeros(V, dtype=bool)
    second_word = np.zeros(V, dtype=bool)
    for ids, _ in phrases:
        first_word[ids[0]] = second_word[ids[1]] = True
    cand = np.flatnonzero(first_word[tokens.tok[:-1]] & second_word[tokens.tok[1:]])
    cand = cand[tokens.text[cand] == tokens.text[cand + 1]]
    cand_key = tok[cand] * V + tok[cand + 1]
    keys = unique(np.array([ids[0] * V + ids[1] for ids, _ in phrases]))
    hit = contains(keys, cand_key)
    cand, cand_key = cand[hit], cand_key[hit]
    order = np.argsort(cand_key, kind="stable")
    sorted_keys = cand_key[order]
    for k, (ids, _) in enumerate(phrases):
        key = ids[0] * V + ids[1]
        lo, hi = np.searchsorted(sorted_keys, [key, key + 1])
        if lo == hi:
            continue
        p = np.sort(cand[order[lo:hi]])
        n = len(ids)
        ok = p + n <= len(tok)
        p = p[ok]
        ok = tokens.text[p + n - 1] == tokens.text[p]
        for j in range(2, n):
            ok &= tok[np.minimum(p + j, len(tok) - 1)] == ids[j]
        p = p[ok]
        found_start.append(p)
        found_len.append(np.full(len(p), n))
        found_phrase.append(np.full(len(p), k))
    return found_start, found_len, found_phrase


def _phrase_marks(tokens: Tokens, lex: Lexicon, phrases: list, found_start: list, found_len: list,
                  found_phrase: list, activity_index: dict[str, int]) -> tuple[dict[str, list[tuple]], np.ndarray]:
    """The phrases' marks per class ((positions, values, ends[, plural]) arrays) and the token positions they
    consume. Overlapping matches keep the one that starts first (the longest of those); a phrase's activity
    joins ``activity_index``."""
    extra: dict[str, list[tuple]] = {k: [] for k in ("noun", "clothing", "colour", "relation", "activity")}
    if not (found_start and sum(len(f) for f in found_start)):
        return extra, np.zeros(0, dtype=np.int64)
    start = np.concatenate(found_start)
    length = np.concatenate(found_len)
    which = np.concatenate(found_phrase)
    order = np.lexsort((-length, start))
    start, length, which = start[order], length[order], which[order]
    first = np.concatenate([[True], start[1:] != start[:-1]])
    start, length, which = start[first], length[first], which[first]
    end = start + length
    reach = np.maximum.accumulate(end)
    keep = np.concatenate([[True], start[1:] >= reach[:-1]])
    start, length, which, end = start[keep], length[keep], which[keep], end[keep]
    consumed_pos = np.repeat(start, length) + (np.arange(length.sum()) - np.repeat(np.cumsum(length) - length,
                                                                                     length))
    for k in np.unique(which).tolist():
        ids, entries = phrases[k]
        at_k = which == k
        s0, e0 = start[at_k], end[at_k]
        for cls, value, anchor in entries:
            if cls == "activity":
                value = activity_index.setdefault(value, len(activity_index))
            anchor_pos = e0 - 1 if anchor == "last" else s0
            values = np.full(len(s0), value, dtype=np.int64)
            if cls == "noun":
                last = tokens.vocab[int(ids[-1])]
                plural = lex.nouns.get(last, (0, last.endswith("s")))[1]
                extra[cls].append((anchor_pos, values, e0, np.full(len(s0), plural)))
            else:
                extra[cls].append((anchor_pos, values, e0))
    return extra, consumed_pos
