"""Text into tokens: every tokeniser behind one interface, one module each (sacrebleu's ``tokenizers/`` is the
model).

A tokeniser is a :class:`~.base.Tokenizer`: called with one text it returns the text's tokens, and
:meth:`~.base.Tokenizer.signature` names it in a report. :data:`REGISTRY` holds each by name;
:func:`get_tokenizer` makes one.

- ``words`` (:mod:`.words`): lexical diversity's word tokens (Unicode normalisation, case and punctuation as
  its TokenSettings say), and TokenCorpus, the integer ids every diversity measure reads;
- ``whitespace`` (:mod:`.whitespace`): ``str.split()``, how coco-caption's BLEU and CIDEr-D read a caption, and
  the same tokens as integer ids for a whole corpus at once;
- ``ptb`` (:mod:`.ptb`): coco-caption's PTBTokenizer (the Stanford jar, through Java), lower-cased and with its
  punctuation tokens dropped; the module also holds the scorers' setting ``none`` | ``ptb``
  (:data:`~.ptb.TOKENIZERS`, :func:`~.ptb.tokenize_texts`).

Each module's own functions (``tokenize_corpus``, ``ref_tokens``, ``ptb_tokenize``) are the batch forms the
measures and metrics call; a tokeniser object gives the same tokens one text at a time.
"""

from __future__ import annotations

from .base import Tokenizer
from .ptb import PtbTokenizer
from .whitespace import WhitespaceTokenizer
from .words import WordTokenizer

__all__ = ["REGISTRY", "Tokenizer", "get_tokenizer"]

#: Every tokeniser, by name.
REGISTRY: dict[str, type[Tokenizer]] = {t.name: t for t in (WordTokenizer, WhitespaceTokenizer, PtbTokenizer)}


def get_tokenizer(name: str, **options) -> Tokenizer:
    """The tokeniser called ``name``, made with ``options`` (``words`` takes ``settings``)."""
    try:
        kind = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown tokeniser {name!r}; choose one of {', '.join(REGISTRY)}") from None
    return kind(**options)
