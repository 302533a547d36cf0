"""What every tokeniser is: called with one text, it returns the text's tokens (sacrebleu's BaseTokenizer is the
model)."""

from __future__ import annotations


class Tokenizer:
    """Text into tokens. ``name`` is the tokeniser's name in :data:`annotator.tokenize.REGISTRY`."""

    name = ""

    def signature(self) -> str:
        """How a report names this tokeniser."""
        return self.name

    def __call__(self, text: str) -> list[str]:
        raise NotImplementedError
