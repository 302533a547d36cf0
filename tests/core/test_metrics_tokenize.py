"""PTB tokenisation against pycocoevalcap's PTBTokenizer (same Stanford jar), and the Java process manager."""

from __future__ import annotations

import os
import shutil
import signal

import pytest

from annotator.metrics import MetricInputError
from annotator.tokenize import ptb as tokenize
from annotator.metrics.synthetic import synthetic_corpus

pytestmark = [pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java (no `java` on PATH)"),
              pytest.mark.java]

TRICKY = [
    'A man\'s hat (red) -- "quoted" ... ok?',
    '"He said hello," she said.',
    "It's 5 p.m. in the U.S.",
    "can't won't gonna cannot",
    "'single quotes' and `backticks`",
    "etc.",
    "E-mail me at foo@bar.com or http://x.org/a?b=c",
    "The cat & dog  are   {here} [there] 3.5% $10",
    "",
    "   leading and trailing spaces   ",
    "Mr. Smith went to Washington.",
    ":-) ;) <3 #tag @user",
    "naïve café déjà-vu — “smart quotes” ‘x’",
    "A DOG RUNS!!!",
    "a\ttab and\nnewline",
    "semi; colon: dash - and -- double",
]


def coco_tokenize(texts):
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    out = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(texts)})
    return [out[i][0] for i in range(len(texts))]


def test_matches_pycocoevalcap_on_tricky_text():
    tokenize.clear_cache()
    assert tokenize.ptb_tokenize(TRICKY) == coco_tokenize(TRICKY)


def test_matches_pycocoevalcap_on_generated_captions():
    hyps, refs = synthetic_corpus(300, 3, seed=11, odd_rate=0.3)
    texts = hyps + [r for rs in refs for r in rs]
    tokenize.clear_cache()
    assert tokenize.ptb_tokenize(texts) == coco_tokenize(texts)


def test_command_line_mode_equals_server_mode():
    tokenize.clear_cache()
    server = tokenize.ptb_tokenize(TRICKY, mode="server")
    tokenize.clear_cache()
    assert tokenize.ptb_tokenize(TRICKY, mode="cli") == server


def test_each_caption_is_tokenised_on_its_own():
    # a caption's tokens must not depend on its neighbours (per-caption caching relies on it)
    tokenize.clear_cache()
    together = tokenize.ptb_tokenize(TRICKY)
    for text, want in zip(TRICKY, together):
        tokenize.clear_cache()
        assert tokenize.ptb_tokenize([text]) == [want]


def test_known_output():
    tokenize.clear_cache()
    assert tokenize.ptb_tokenize(["A man's hat (red), isn't it?"]) == ["a man 's hat -lrb- red -rrb- is n't it"]


def test_server_restarts_after_it_died():
    tokenize.clear_cache()
    tokenize.ptb_tokenize(["warm up"])
    proc = tokenize.ptb_server()
    starts = proc.starts
    os.kill(proc._proc.pid, signal.SIGKILL)  # our own child process
    proc._proc.wait()
    tokenize.clear_cache()
    assert tokenize.ptb_tokenize(["Dogs run."]) == ["dogs run"]
    assert proc.starts == starts + 1


def test_unknown_tokenizer():
    with pytest.raises(MetricInputError):
        tokenize.check_tokenizer("spacy")
    assert tokenize.check_tokenizer(None) == "none"
    assert tokenize.tokenize_texts(["A  B"], None) == ["A  B"]
