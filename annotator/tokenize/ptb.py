"""Caption tokenisation before scoring.

``none`` (the default) leaves the text alone: each scorer then splits raw
strings the way coco-caption's scorers do (BLEU, CIDEr-D: ``str.split()``;
ROUGE-L: ``str.split(" ")``; METEOR: its own ``-norm`` normalisation).

``ptb`` reproduces coco-caption's ``PTBTokenizer``: the Stanford CoreNLP
3.4.1 PTB tokenizer (the jar pycocoevalcap ships) with ``-preserveLines
-lowerCase``, then the removal of the punctuation tokens listed in
:data:`PUNCTUATIONS`. It runs the same jar: by default a small line server
(``javasrc/PtbLines.java``, launched with Java's single-file source mode) kept
warm so one edited caption can be tokenised in milliseconds; if that cannot
start (a Java runtime without the compiler module) the tokenizer's own command
line is run once per batch, exactly as pycocoevalcap does.

Deviations, all on inputs where pycocoevalcap itself misaligns captions:
a carriage return inside a caption is turned into a space like a line feed
(pycocoevalcap only replaces ``\\n``), and a line-separator token the lexer
finds inside one caption (e.g. U+2028) counts as a space.

Results are cached per text (bounded), so references are tokenised once.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from ..errors import MetricInputError, MetricUnavailable
from ..java import JavaProcess, corenlp_jar, java_executable
from ..lru import BatchCache
from .base import Tokenizer

TOKENIZERS = ("none", "ptb")

#: Tokens coco-caption's PTBTokenizer drops after tokenising (its list, verbatim;
#: note that with -lowerCase the bracket tokens come out as -lrb- etc. and so stay).
PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                          ".", "?", "!", ",", ":", "-", "--", "...", ";"])

#: Tokenised lines by text.
_cache = BatchCache(500_000)

_JAVA_SRC = Path(__file__).with_name("javasrc") / "PtbLines.java"


def check_tokenizer(name: str | None) -> str:
    """Normalise a tokenizer name (None → ``"none"``); raise for unknown names."""
    if name is None:
        return "none"
    name = str(name).lower()
    if name not in TOKENIZERS:
        raise MetricInputError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
    return name


def tokenize_texts(texts: Sequence[str], name: str | None) -> list[str]:
    """Apply tokenizer ``name`` to every text (order kept)."""
    name = check_tokenizer(name)
    if name == "none":
        return list(texts)
    return ptb_tokenize(texts)


def _clean(text: str) -> str:
    # coco-caption replaces '\n' with ' '; '\r' would split a caption too, so it goes as well
    return text.replace("\r", " ").replace("\n", " ")


def _postprocess(line: str) -> str:
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)


def ptb_tokenize(texts: Sequence[str], *, mode: str = "auto") -> list[str]:
    """PTB-tokenise ``texts`` as coco-caption's PTBTokenizer does.

    ``mode``: ``"auto"`` (warm line server, falling back to the command
    line), ``"server"`` or ``"cli"`` (one JVM run per call, as pycocoevalcap).
    Raises MetricUnavailable without Java.
    """
    texts = list(texts)
    todo = _cache.missing(texts)
    if todo:
        cleaned = [_clean(t) for t in todo]
        raw = None
        if mode in ("auto", "server"):
            try:
                raw = _server_tokenize(cleaned)
            except MetricUnavailable:
                if mode == "server":
                    raise
        if raw is None:
            raw = _cli_tokenize(cleaned)
        done = {t: _postprocess(r) for t, r in zip(todo, raw)}
    else:
        done = {}
    return _cache.answers(texts, done)


class PtbTokenizer(Tokenizer):
    """The tokens of :func:`ptb_tokenize`, one text at a time (needs Java: MetricUnavailable without it)."""

    name = "ptb"

    def __call__(self, text: str) -> list[str]:
        return ptb_tokenize([text])[0].split()


def clear_cache() -> None:
    """Forget cached tokenisations (tests use this to force a fresh run)."""
    _cache.clear()


def _server_cmd() -> list[str]:
    return [java_executable(), "-cp", str(corenlp_jar()), str(_JAVA_SRC)]


_server = JavaProcess("the PTB tokenizer", _server_cmd)
_server_broken = False


def _server_tokenize(lines: list[str]) -> list[str]:
    global _server_broken
    if _server_broken:
        raise MetricUnavailable("the PTB line server could not start earlier")
    try:
        return _server.request(lines, len(lines))
    except MetricUnavailable:
        _server_broken = True
        raise


def _cli_tokenize(lines: list[str]) -> list[str]:
    """Run PTBTokenizer's command line on a temporary file, as pycocoevalcap does."""
    java = java_executable()
    jar = corenlp_jar()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "captions.txt"
        path.write_bytes("\n".join(lines).encode("utf-8"))
        proc = subprocess.run([java, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer",
                               "-preserveLines", "-lowerCase", str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise MetricUnavailable(f"PTBTokenizer failed: {proc.stderr.decode('utf-8', 'replace')[-500:]}")
    out = proc.stdout.decode("utf-8").split("\n")
    if len(out) < len(lines):
        raise MetricUnavailable(f"PTBTokenizer returned {len(out)} lines for {len(lines)} captions")
    return out[:len(lines)]


def ptb_server() -> JavaProcess:
    """The shared PTB line-server process (for warm-up and shutdown)."""
    return _server
