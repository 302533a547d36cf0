"""The hash table that numbers word keys and n-gram codes for BLEU and CIDEr-D: every key gets its number back,
whatever the collisions, growth and key values."""

from __future__ import annotations

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.keytable import KeyTable
from annotator.metrics import Bleu, CiderD, _ngrams


@pytest.mark.parametrize("seed", range(4))
def test_keys_get_their_numbers_and_absent_keys_minus_one(seed):
    rng = np.random.default_rng(seed)
    # wide random keys, negative ones, and runs of near keys (which share their top hash bits least)
    pool = np.unique(np.concatenate([rng.integers(-(1 << 62), 1 << 62, 3000), np.arange(5000) * 4096,
                                     np.arange(-50, 50)]))
    rng.shuffle(pool)
    held, absent = pool[:len(pool) // 2], pool[len(pool) // 2:]
    table = KeyTable()
    for part in np.array_split(np.arange(len(held)), 7):  # added in batches: the table grows between them
        table.add(held[part], part)
    assert len(table) == len(held)
    query = np.concatenate([held, absent, held[::-3]])
    want = np.concatenate([np.arange(len(held)), np.full(len(absent), -1), np.arange(len(held))[::-3]])
    assert table.get(query).tolist() == want.tolist()


def test_a_full_probe_chain_is_followed():
    # keys that all hash to one slot of a small table: each is found behind the others
    table = KeyTable()
    same = np.flatnonzero(table._slots(np.arange(1 << 16)) == 7)[:40]
    table.add(same[:30], np.arange(30))
    assert table.get(same).tolist() == list(range(30)) + [-1] * 10


@pytest.mark.parametrize("cls", [Bleu, CiderD])
def test_ngram_codes_of_a_large_range_are_numbered_through_the_hash_table(monkeypatch, cls):
    # a vocabulary of tens of thousands makes the 3- and 4-gram code ranges large: they take the hash table
    hyps, refs = edge_corpus(6, 150)
    # words tagged by the image they describe (mod 40): a vocabulary whose squared size outgrows the occurrences
    hyps = [" ".join(f"{w}{i % 40}" for w in h.split()) for i, h in enumerate(hyps)]
    refs = [[" ".join(f"{w}{i % 40}" for w in r.split()) for r in rs] for i, rs in enumerate(refs)]
    monkeypatch.setattr(_ngrams, "DIRECT_RANGE", 0)
    tables = []
    monkeypatch.setattr(_ngrams, "KeyTable", lambda n: tables.append(n) or KeyTable(n))
    key = "bleu" if cls is Bleu else "cider"
    want, segs = reference_scores(key, hyps, refs)
    got = cls().corpus_score(hyps, refs)
    assert got.values == want
    assert (got.segments if cls is Bleu else {"CIDEr": got.per_segment}) == segs
    assert len(tables) == 3  # bigrams, trigrams and 4-grams
