"""The span rule of the correction guards: change only the words the annotators marked.

When the caption, in the chosen judgement layer, has error spans (annotator.spans) of the type being
corrected, a correction may change only tokens inside those spans, plus the words that agree with them
elsewhere (articles, pronouns, number-agreeing verbs and plural endings: guidelines/span_words.toml). The
guard (annotator.correction.guards.check_correction) applies this rule instead of the word-class rules when
it is given spans; captions without spans keep the word-class rules.

Spans count whitespace tokens; the guard's alignment (annotator.correction.tokens) counts words and
punctuation, so each alignment token is mapped to the whitespace token it lies in.

Also here: which spans a layer gives a caption (:func:`layer_spans`, :func:`caption_spans`) and the corrected
caption the spans' suggested fixes make (:func:`prefill`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..spans import Span, caption_tokens, merge_spans as merge, spans_of_type
from ..taxonomy import GUIDELINES_DIR, read_toml, taxonomy
from .tokens import Edit, align, tokenize

SPAN_WORDS_FILE = GUIDELINES_DIR / "span_words.toml"
RULE_NAME = "spans"


@dataclass(frozen=True)
class AgreementWords:
    """Words that may change outside the spans (lower case), and the plural endings."""

    words: frozenset
    plural_endings: tuple[str, ...]


@lru_cache(maxsize=4)
def agreement_words(path: Path | str = SPAN_WORDS_FILE) -> AgreementWords:
    """The agreement words of guidelines/span_words.toml."""
    data = read_toml(path, "the span agreement words").get("agreement", {})
    words = frozenset(w.lower() for key in ("articles", "pronouns", "verbs") for w in data.get(key, ()))
    endings = tuple(sorted((e.lower() for e in data.get("plural_endings", ("s", "es"))), key=len, reverse=True))
    return AgreementWords(words, endings)


def _whitespace_index(text: str) -> list[int]:
    """For each alignment token of ``text``: the index of the whitespace token it lies in."""
    starts, pos = [], 0
    for word in caption_tokens(text):
        pos = text.index(word, pos)
        starts.append((pos, pos + len(word)))
        pos += len(word)
    out, k = [], 0
    for tok in tokenize(text):
        while k < len(starts) - 1 and tok.start >= starts[k][1]:
            k += 1
        out.append(k)
    return out


def _plural_pair(old: str, new: str, agree: AgreementWords) -> bool:
    """True when ``old`` and ``new`` differ only by a plural ending (horse/horses, box/boxes)."""
    short, long_ = sorted((old.lower(), new.lower()), key=len)
    return any(long_ == short + e for e in agree.plural_endings)


def _free(token: str, agree: AgreementWords) -> bool:
    return token.lower() in agree.words or not token[:1].isalnum() and not token[:1] == "_"


def _outside_ok(e: Edit, inside: list[bool], agree: AgreementWords) -> tuple[list[str], list[str]]:
    """The words of an edit changed outside the spans that are not agreement changes: (old words, new words)."""
    touches_span = any(inside[k] for k in range(e.i1, e.i2))
    if e.tag == "insert":
        # An insertion next to a span extends it; elsewhere only agreement words may come in.
        near = (e.i1 > 0 and inside[e.i1 - 1]) or (e.i1 < len(inside) and inside[e.i1])
        if near:
            return [], []
    old_out = [t for k, t in zip(range(e.i1, e.i2), e.old) if not inside[k]]
    # An old word outside the spans may go only as an agreement word or for itself with(out) a plural ending.
    old_bad = [t for t in old_out if not _free(t, agree) and not any(_plural_pair(t, n, agree) for n in e.new)]
    new_bad = []
    if not touches_span:  # the new words of an edit that touches a span belong to the span's change
        new_bad = [t for t in e.new if not _free(t, agree) and not any(_plural_pair(t, o, agree) for o in e.old)]
    return old_bad, new_bad


def _change(old: list[str], new: list[str], replaced: bool) -> str:
    """``'man' → 'woman'``, ``'red' added``, ``'tall' removed`` or ``'rides' replaced`` (``replaced``: the edit
    put other words in its place)."""
    def words(ws):
        return repr(" ".join(ws))
    if old and new:
        return f"{words(old)} → {words(new)}"
    return f"{words(new)} added" if new else f"{words(old)} {'replaced' if replaced else 'removed'}"


def span_violations(error_type: str, original: str, corrected: str, spans) -> list[str]:
    """Why ``corrected`` changes more than the spans of ``error_type`` in ``original`` allow (empty: it keeps
    to them). Each message names the words changed outside the marked ones."""
    agree = agreement_words()
    marked = spans_of_type(spans, error_type)
    covered = {i for s in marked for i in s.tokens()}
    where = _whitespace_index(original)
    inside = [w in covered for w in where]
    words = caption_tokens(original)
    shown = "; ".join(repr(" ".join(words[s.start:s.end])) for s in marked)
    name = taxonomy().get(error_type).name
    out = []
    for e in align(original, corrected):
        old_bad, new_bad = _outside_ok(e, inside, agree)
        if old_bad or new_bad:
            out.append(f"{_change(old_bad, new_bad, bool(e.new))}: changed outside the words marked with {name} ({shown}); "
                       "only those, and the articles, pronouns and plural endings that agree with them, may change")
    if not tokenize(corrected):
        out.append("the corrected caption is empty")
    return out


def prefill(text: str, spans, error_type: str | None = None) -> str:
    """``text`` with the suggested fix of each span (of ``error_type`` when given) in place of its words."""
    words = caption_tokens(text)
    chosen = spans_of_type(spans, error_type) if error_type is not None else tuple(sorted(spans or ()))
    for s in sorted((s for s in chosen if s.fix is not None), key=lambda s: s.start, reverse=True):
        if s.end <= len(words):
            words[s.start:s.end] = s.fix.split()
    return " ".join(words) if any(s.fix is not None for s in chosen) else text


def layer_spans(store, project: str, system: str | None, layer, error_type: str | None = None, *,
                frame=None) -> dict[int, tuple[Span, ...]]:
    """caption id → the spans of ``error_type`` (None: of every type) that the judgements ``layer`` rests on give
    the caption (annotator.layers.layer_judgement_ids; several judgements' spans merged per type), over one
    system's captions (None: every system's). Captions without any are absent. ``frame``: the judgement frame
    (annotations and adjudications) of those captions, when read already."""
    from ..layers import layer_judgement_ids
    from ..store.analysis_queries import judgement_frame
    from ..store.judgements import judgement_spans
    if frame is None:
        frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
    ids = [int(i) for i in layer_judgement_ids(frame, layer, system=system)]
    with store.read() as conn:
        found = judgement_spans(conn, ids)
    per_caption: dict[int, list[Span]] = {}
    for caption_id, spans in found:
        per_caption.setdefault(caption_id, []).extend(spans if error_type is None else spans_of_type(spans, error_type))
    return {c: merge(s) for c, s in per_caption.items() if s}


def caption_spans(store, caption_id: int, error_type: str, layer=None) -> tuple[Span, ...]:
    """The spans of ``error_type`` on one caption: from ``layer`` (annotator.layers) when given, else from every
    current judgement of the caption (annotations and adjudications), merged."""
    from ..store.judgements import caption_place, current_caption_spans
    if layer is not None:
        with store.read() as conn:
            project, system = caption_place(conn, caption_id)
        return layer_spans(store, project, system, layer, error_type).get(caption_id, ())
    with store.read() as conn:
        spans = current_caption_spans(conn, caption_id)
    return merge(spans_of_type(spans, error_type))


def pieces(text: str, spans) -> list[tuple[str, Span | None]]:
    """The caption as runs of words: (words, the span that marks them or None), in order (``spans`` of one type,
    not overlapping, as annotator.spans.merge_spans gives them)."""
    words = caption_tokens(text)
    out: list[tuple[str, Span | None]] = []
    pos = 0
    for s in sorted(spans or ()):
        if s.start < pos or s.end > len(words):
            continue
        if s.start > pos:
            out.append((" ".join(words[pos:s.start]), None))
        out.append((" ".join(words[s.start:s.end]), s))
        pos = s.end
    if pos < len(words):
        out.append((" ".join(words[pos:]), None))
    return out


def bracketed(text: str, spans) -> str:
    """The caption with its marked words in brackets, a suggested fix after an arrow: ``a [red shirt → blue shirt]``."""
    return " ".join(f"[{w}{' → ' + s.fix if s.fix is not None else ''}]" if s is not None else w
                    for w, s in pieces(text, spans))
