"""The contract every registered metric keeps, checked for each entry of ``annotator.metrics.REGISTRY``.

A metric added to the registry is tested here without a test file of its own:
identity with its reference implementation (float for float, corpus and
per-caption, raw text and PTB-tokenised), empty and one-word captions,
statistics rows that re-aggregate to the corpus score, samples as input, its
signature, its names and the command-line choices derived from the registry.
Captions come as samples with real photographs, their sizes and gold boxes (the
bundled sample project's), so a metric that reads the image or the boxes is
tested like a text metric.
Metric-specific behaviour (hand-computed cases, METEOR's process pool,
CIDEr-D's fixed document frequencies) stays in ``test_metrics_<metric>.py``.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores, samples_of

import annotator.metrics
from annotator.cli import build_parser, main
from annotator.errors import InputError
from annotator.metrics import (REGISTRY, TOKENIZERS, Metric, MetricInputError, MetricRegistry, Sample, Setting,
                               rescore)
from annotator.metrics.base import PREPARED_CACHE
from annotator.model import Box

HAS_JAVA = shutil.which("java") is not None
needs_java = pytest.mark.skipif(not HAS_JAVA, reason="PTB tokenisation needs Java (no `java` on PATH)")

#: The signatures of the metrics that reproduce coco-caption (their exact text is part of every exported table).
SIGNATURES = {
    "bleu": "BLEU|n=4|ref=closest|smooth=1e-9,1e-15|tok=none|coco-caption-1.2",
    "meteor": "METEOR|version=1.5|lang=en|norm=yes|tok=none|coco-caption-1.2",
    "rouge": "ROUGE-L|beta=1.2|split=space|tok=none|coco-caption-1.2",
    "cider": "CIDEr-D|n=4|sigma=6|df=refs-of-scored-set|tok=none|coco-caption-1.2",
}


def _param(cls):
    # metrics run by another process (METEOR's JVM) are the slow ones; they share the Java tests' worker
    return pytest.param(cls.key, id=cls.key, marks=() if cls.in_process else (pytest.mark.slow, pytest.mark.java))


ALL = [_param(cls) for cls in REGISTRY]
DECLARED = [cls.key for cls in REGISTRY]  # for the tests that read declarations only (no process is started)
WITH_REFERENCE = [_param(cls) for cls in REGISTRY if cls.reference]
TEXT_ONLY = [_param(cls) for cls in REGISTRY if cls.requires == {"references"}]


@pytest.fixture
def scorers(reference_scorers):
    """The reference implementation's scorer of each metric (one per run: pycocoevalcap's METEOR starts a JVM)."""
    return reference_scorers


def metric(key: str, **kw) -> Metric:
    """The registered metric ``key``; the test is skipped where it cannot run."""
    reason = REGISTRY.get(key).unavailable_reason()
    if reason:
        pytest.skip(reason)
    return REGISTRY.get(key)(**kw)


# --------------------------------------------------------------------------- identity with the reference

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("key", WITH_REFERENCE)
def test_equals_reference_implementation(key, seed, scorers):
    m = metric(key)
    hyps, refs = edge_corpus(seed, 200)
    want, want_segs = reference_scores(key, hyps, refs, scorers(key))
    got = m.corpus_score(samples_of(hyps, refs))
    assert got.values == want
    assert got.segments == want_segs
    assert got.value == want[m.headline_key] and got.per_segment == want_segs[m.headline_key]
    # the corpus score from statistics rows alone (no per-caption values asked for) is the same number
    assert m.aggregate(m.stats(hyps, refs)).values == want


@needs_java
@pytest.mark.java
@pytest.mark.parametrize("key", WITH_REFERENCE)
def test_equals_reference_implementation_after_ptb_tokenisation(key, scorers):
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    m = metric(key, tokenize="ptb")
    hyps, refs = edge_corpus(6, 120)
    tok = PTBTokenizer()
    gts = tok.tokenize({i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)})
    res = tok.tokenize({i: [{"caption": h}] for i, h in enumerate(hyps)})
    want, want_segs = reference_scores(key, [res[i][0] for i in range(len(hyps))], [gts[i] for i in range(len(hyps))],
                                       scorers(key))
    got = m.corpus_score(hyps, refs)
    assert got.values == want and got.segments == want_segs
    assert "|tok=ptb|" in got.signature


@pytest.mark.parametrize("key", WITH_REFERENCE)
def test_empty_and_one_word_captions(key, scorers):
    m = metric(key)
    hyps = ["", "dog", "a", "", "dog"]
    refs = [["a dog runs", "dog"], ["dog"], ["a man", "a"], [""], ["a cat"]]
    want, want_segs = reference_scores(key, hyps, refs, scorers(key))
    got = m.corpus_score(samples_of(hyps, refs))
    assert got.values == want and got.segments == want_segs
    assert all(np.isfinite(v) for v in got.values.values())
    # and one caption at a time, each against its own references (a set whose only reference is empty is
    # refused by CIDEr-D, as by coco-caption: test_metrics_cider)
    for h, r in [(h, r) for h, r in zip(hyps, refs) if any(r)]:
        assert m.corpus_score(samples_of([h], [r])).values == reference_scores(key, [h], [r], scorers(key))[0]


# --------------------------------------------------------------------------- statistics

@pytest.mark.parametrize("key", ALL)
def test_statistics_rows_rescore_and_resample(key):
    m = metric(key)
    hyps, refs = edge_corpus(3, 80)
    context = samples_of(hyps, refs)
    prep = m.prepare(context)
    rows = m.stats(hyps, prep)
    assert rows.shape == (80, m.width) and rows.dtype == np.float64
    score = m.aggregate(rows, per_segment=True)
    assert set(score.values) == set(m.score_keys) and set(score.segments) == set(m.score_keys)
    assert score.name == m.label and score.signature == m.signature and score.n == 80
    # one caption's row, alone or at its place, equals its row in the batch
    for i in (0, 1, 3, 79):
        assert m.segment_stats(hyps[i], prepared=prep, index=i).tolist() == rows[i].tolist()
    assert m.stats_at([hyps[5], hyps[2]], prep, [5, 2]).tolist() == rows[[5, 2]].tolist()
    # an edited caption's row put in place gives the score of the edited corpus
    edited = list(hyps)
    edited[7] = "a zebra " + refs[7][0]
    rows[7] = m.segment_stats(edited[7], prepared=prep, index=7)
    assert m.aggregate(rows).values == m.corpus_score(edited, context).values
    # a resample that draws every caption once is the corpus score
    once = m.resample(rows, np.ones((1, 80)))[0]
    assert once.tolist() == pytest.approx([m.aggregate(rows).values[k] for k in m.score_keys], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("key", ALL)
def test_bad_input_is_refused_with_a_clear_error(key):
    m = metric(key)
    if "references" in m.requires:
        with pytest.raises(MetricInputError, match="caption 0 has no reference"):
            m.corpus_score(samples_of(["a"], [[]]))
        with pytest.raises(MetricInputError, match="caption 0 has no reference"):
            m.corpus_score(["a"], [[]])
        with pytest.raises(MetricInputError, match="not one string"):
            m.corpus_score(["a"], ["a reference string instead of a list"])
    with pytest.raises(MetricInputError, match="2 captions but 1 reference sets"):
        m.corpus_score(["a", "b"], samples_of(["a"], [["a"]]))
    with pytest.raises(MetricInputError, match="no captions"):
        m.aggregate(np.zeros((0, m.width)))
    with pytest.raises(InputError):  # every metric input error is an input error of the tool (exit code 2)
        m.corpus_score([1], samples_of(["a"], [["a"]]))


# --------------------------------------------------------------------------- samples

@pytest.mark.parametrize("key", TEXT_ONLY)
def test_samples_give_the_numbers_of_reference_lists(key):
    m = metric(key)
    hyps, refs = edge_corpus(4, 60)
    samples = [Sample(h, r, image=f"img{i}.jpg", image_size=(640, 480),
                      boxes=[Box(f"b{i}", "dog", 1, 2, 30, 40)]) for i, (h, r) in enumerate(zip(hyps, refs))]
    want = m.stats(hyps, refs)
    assert m.stats(samples).tolist() == want.tolist()
    assert m.stats(hyps, samples).tolist() == want.tolist()
    # a text metric prepares the same references once, however they come
    assert m.prepare(samples) is m.prepare(refs)
    assert m.segment_stats(samples[9]).tolist() == m.segment_stats(hyps[9], refs[9]).tolist()
    assert m.corpus_score(samples).values == m.corpus_score(hyps, refs).values


@pytest.mark.java  # every available text metric: METEOR too
def test_rescore_takes_samples():
    hyps, refs = edge_corpus(5, 50)
    samples = [Sample(h, r) for h, r in zip(hyps, refs)]
    metrics = [k for k in REGISTRY.available() if REGISTRY.get(k).requires == {"references"}]
    assert rescore(samples, metrics=metrics, per_segment=True) == rescore(hyps, refs, metrics=metrics, per_segment=True)
    with pytest.raises(MetricInputError, match="give the references"):
        rescore(hyps)
    with pytest.raises(MetricInputError, match="is not a Sample"):
        rescore(hyps, [samples[0], refs[1]] + refs[2:])
    with pytest.raises(MetricInputError, match="references must be a list of strings, not one string"):
        Sample("a dog", "a dog runs")


class _ImageWidth(Metric):
    """Probe of the sample path: a caption's statistic is its image's width (nothing textual)."""

    key = "image-width"
    label = "ImageWidth"
    requires = frozenset({"image"})
    implementation = "probe"
    score_keys = ("ImageWidth",)

    def _prepare(self, tok_refs, samples):
        return [s.image_size[0] for s in samples]

    def _segment(self, hyp, prep, index):
        return [prep.data[index]]

    def _aggregate(self, stats, per_segment):
        from annotator.metrics import Score
        return Score(self.label, float(stats.mean()), {"ImageWidth": float(stats.mean())}, self.signature, len(stats))

    def _resample(self, stats, weights):
        return (weights @ stats[:, 0] / stats.shape[0])[:, None]


def test_a_metric_that_requires_images_is_handed_the_samples():
    m = _ImageWidth()
    samples = [Sample("a dog", image="a.jpg", image_size=(640, 480)), Sample("", image="b.png", image_size=(100, 50))]
    assert m.corpus_score(samples).value == 370.0
    # references are not required, and prepared samples are cached by image, not by caption
    assert m.prepare(samples) is m.prepare([Sample("other", image="a.jpg", image_size=(640, 480)), samples[1]])
    with pytest.raises(MetricInputError, match="needs image of every caption: give Sample objects"):
        m.stats(["a dog"], [["a dog"]])
    with pytest.raises(MetricInputError, match="ImageWidth needs the image of every caption; caption 1 has none"):
        m.stats([samples[0], Sample("x")])


# --------------------------------------------------------------------------- signature, names, registry

@pytest.mark.parametrize("key", DECLARED)
def test_signature_records_every_setting(key):
    cls = REGISTRY.get(key)
    for tok in TOKENIZERS:
        m = cls(tokenize=tok)
        fields = m.signature.split("|")
        assert fields == [cls.label, *(f"{s.name}={s.value(m)}" for s in cls.settings), f"tok={tok}",
                          cls.implementation]
        assert len({f.split("=")[0] for f in fields[1:-1]}) == len(cls.settings) + 1  # names do not repeat
    assert all(isinstance(s, Setting) and s.help for s in cls.settings)
    if key in SIGNATURES:
        assert cls().signature == SIGNATURES[key]


@pytest.mark.parametrize("key", DECLARED)
def test_names_and_score_keys(key):
    cls = REGISTRY.get(key)
    for name in (key, key.upper(), f" {key} ", *cls.aliases, *(a.upper() for a in cls.aliases), cls.label):
        assert REGISTRY.resolve(name) == key
        assert name in REGISTRY
    m = cls()
    assert m.score_keys and len(set(m.score_keys)) == len(m.score_keys)
    assert m.headline_key in m.score_keys
    assert set(m.score_labels) == set(m.score_keys) and all(m.score_labels.values())
    assert all(REGISTRY.metric_of_score(s) == key for s in m.score_keys)
    assert REGISTRY.score_keys([key]) == m.score_keys
    assert cls.requires <= {"references", "image", "boxes"}


def test_registry_lists():
    # the coco-caption metrics come first, in coco-caption's order; later entries follow them in every list
    coco = ("bleu", "meteor", "rouge", "cider")
    keys = REGISTRY.keys()
    assert keys[:4] == coco
    assert REGISTRY.score_keys(coco) == ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr")
    assert REGISTRY.score_keys() == tuple(s for k in keys for s in REGISTRY.get(k)().score_keys)
    labels = REGISTRY.score_labels()
    assert {k: labels[k] for k in REGISTRY.score_keys(coco)} == {
        "Bleu_1": "BLEU-1", "Bleu_2": "BLEU-2", "Bleu_3": "BLEU-3", "Bleu_4": "BLEU-4", "METEOR": "METEOR",
        "ROUGE_L": "ROUGE-L", "CIDEr": "CIDEr-D"}
    assert set(labels) == set(REGISTRY.score_keys())
    assert REGISTRY.headline_keys(coco) == ("Bleu_4", "METEOR", "ROUGE_L", "CIDEr")
    assert REGISTRY.defaults()[:4] == coco and REGISTRY.defaults(in_process_only=True)[:3] == ("bleu", "rouge", "cider")
    assert REGISTRY.requires(coco) == {"references"} == REGISTRY.requires(["cider"])
    # asked in any order and under any name, answers come in table order
    assert REGISTRY.select("CIDEr-D,bleu, rouge_l") == ("bleu", "rouge", "cider")
    assert REGISTRY.score_keys(["cider", "BLEU"]) == ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "CIDEr")
    assert REGISTRY.metrics_of_scores(["CIDEr", "Bleu_2", "Bleu_4"]) == ("bleu", "cider")
    assert [type(m) for m in REGISTRY.create(["rouge", "bleu"], tokenize="ptb")] == [REGISTRY.get("bleu"),
                                                                                   REGISTRY.get("rouge")]
    described = REGISTRY.describe()
    assert [d["key"] for d in described] == list(keys)
    assert {d["key"]: d["signature"] for d in described if d["key"] in SIGNATURES} == SIGNATURES
    json.dumps(described)
    with pytest.raises(MetricInputError, match="unknown metric 'bleurt'; choose from bleu, meteor, rouge, cider"):
        REGISTRY.resolve("bleurt")
    with pytest.raises(MetricInputError, match="unknown metric 'BLEU'; choose from Bleu_1"):
        REGISTRY.metric_of_score("BLEU")
    assert annotator.metrics.RESULT_KEYS == REGISTRY.score_keys()
    assert annotator.metrics.DEFAULT_METRICS == REGISTRY.defaults()


def test_registry_refuses_clashing_declarations():
    bleu, rouge = REGISTRY.get("bleu"), REGISTRY.get("rouge")

    class Clash(rouge):
        key = "other"
        aliases = ("BLEU",)

    with pytest.raises(ValueError, match="'bleu' of Clash is already used by 'bleu'"):
        MetricRegistry([bleu, Clash])
    with pytest.raises(ValueError, match="score key 'ROUGE_L' of Copy is already reported by 'rouge'"):
        MetricRegistry([rouge, type("Copy", (rouge,), {"key": "copy", "label": "Copy", "aliases": ()})])
    with pytest.raises(ValueError, match="requires unknown sample fields"):
        MetricRegistry([type("Odd", (rouge,), {"key": "odd", "label": "Odd", "requires": frozenset({"audio"})})])


def _subparser(parser, name):
    action = next(a for a in parser._subparsers._group_actions if name in a.choices)
    return action.choices[name]


def _option(parser, flag):
    return next(a for a in parser._actions if flag in a.option_strings)


def test_command_line_choices_come_from_the_registry(capsys):
    parser = build_parser()
    rescore_cmd = _subparser(parser, "rescore")
    assert _option(rescore_cmd, "--metrics").default == ",".join(REGISTRY.defaults())
    assert _option(rescore_cmd, "--tokenize").choices == TOKENIZERS
    correlate = _subparser(parser, "correlate")
    assert tuple(_option(correlate, "--metric").choices) == REGISTRY.names()
    assert _option(correlate, "--tokenize").choices == TOKENIZERS
    with pytest.raises(SystemExit) as stop:
        main(["correlate", "--project", "p", "--metric", "bleurt"])
    assert stop.value.code == 2 and "invalid choice: 'bleurt'" in capsys.readouterr().err
    assert main(["rescore", "--project", "p", "--system", "s", "--metrics", "bleu,bleurt"]) == 2
    assert "unknown metric 'bleurt'; choose from bleu, meteor, rouge, cider" in capsys.readouterr().err


def test_metrics_package_has_no_import_cycle():
    """Every module of annotator.metrics, with the modules it imports (also inside functions): no cycle."""
    root = Path(annotator.metrics.__file__).parent
    graph = {}
    for f in root.glob("*.py"):
        name = f.stem
        deps = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                # "from . import x" imports the submodule x (the package is already being initialised)
                deps.update([node.module] if node.module else [a.name for a in node.names])
        graph[name] = {d for d in deps if (root / f"{d}.py").exists() and d != name}
    seen, path = set(), []

    def visit(n):
        assert n not in path, f"import cycle: {' -> '.join(path[path.index(n):] + [n])}"
        if n in seen:
            return
        path.append(n)
        for d in sorted(graph[n]):
            visit(d)
        path.pop()
        seen.add(n)
    for n in sorted(graph):
        visit(n)


@pytest.fixture(autouse=True)
def _fresh_cache():
    PREPARED_CACHE.clear()
    yield
