"""The vectorised whitespace tokeniser behind BLEU and CIDEr-D must split exactly like ``str.split()``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st


from annotator.tokenize.whitespace import caption_tokens, ref_tokens
from tests.property_helpers import examples

# Characters that stress the byte-level splitter: ASCII whitespace str.split() knows (incl. \x1c-\x1f, the
# joiner), non-ASCII whitespace (forces the fallback path), long tokens (> 7 bytes) and multi-byte UTF-8.
ALPHABET = st.sampled_from(list("ab ") + ["\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\xa0", "\u3000",
                                           "é", "漢", "verylongtoken", "x" * 7, "y" * 8, "\x00"])
TEXT = st.lists(ALPHABET, max_size=30).map("".join)


def _split_ids(texts):
    """Reference behaviour: ids from 1 in first-seen order of str.split() tokens."""
    vocab, ids, counts = {}, [], []
    for t in texts:
        toks = t.split()
        counts.append(len(toks))
        ids.extend(vocab.setdefault(w, len(vocab) + 1) for w in toks)
    return vocab, ids, counts


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=12))
def test_reference_tokens_equal_str_split(texts):
    vocab, ids, counts = _split_ids(texts)
    voc, got_ids, got_counts = ref_tokens(texts)
    assert len(voc) == len(vocab)
    assert voc.words == vocab
    assert got_ids.tolist() == ids
    assert got_counts.tolist() == counts


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=8), st.lists(TEXT, min_size=1, max_size=8))
def test_caption_tokens_use_the_reference_vocabulary(refs, caps):
    vocab, _, _ = _split_ids(refs)
    voc, _, _ = ref_tokens(refs)
    ids, counts, _ = caption_tokens(voc, caps, False)
    expected = [vocab.get(w, 0) for c in caps for w in c.split()]
    assert np.asarray(ids).tolist() == expected
    assert np.asarray(counts).tolist() == [len(c.split()) for c in caps]
