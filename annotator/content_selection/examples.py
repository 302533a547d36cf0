"""Example sentences of the baselines (the content-selection paper's Section 4.3 and its Figure 5), for the CLI.

For chosen images, each baseline's selection at one k (3, as in the paper's
figure) is realised as a sentence (:mod:`.realise`: the chosen concepts joined
by random prepositions or conjunctions, each followed by "the" half of the
time), next to the system captions, with the image's P, R and F. The selection
is the one :func:`.evaluate.explain_image` gives the page's *One image* view,
with the same priors: the training project's, or else the project's own with
the image's descriptions taken out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..correspondence import parse_markup
from ..errors import InputError
from ..model import Project
from .baselines import needs_priors
from .evaluate import Choice, Report, explain_image
from .priors import held_out_priors, learn_priors

__all__ = ["DEFAULT_EXAMPLE_K", "Example", "example_sentences"]

#: The k of the paper's example sentences (its Figure 5).
DEFAULT_EXAMPLE_K = 3


@dataclass(frozen=True)
class Example:
    """One method's sentence for one image."""

    image: str
    choice: Choice

    @property
    def text(self) -> str:
        """The sentence without its box markup."""
        if not self.choice.sentence:
            return ""
        try:
            return parse_markup(self.choice.sentence)[0]
        except (InputError, ValueError):
            return self.choice.sentence

    def to_dict(self) -> dict:
        """JSON-ready: image, method, k, selected box ids, sentence (plain and marked up), P, R, F."""
        c = self.choice
        p, r, f = c.scores if c.scores is not None else (None, None, None)
        return {"image": self.image, "method": c.method, "k": c.k, "selected": list(c.selected),
                "sentence": self.text, "markup": c.sentence, "P": p, "R": r, "F": f}


def example_sentences(project: Project, report: Report, *, train_project: Project | None = None,
                      images: Sequence[str] = (), limit: int = 3, k: int = DEFAULT_EXAMPLE_K,
                      seed: int = 0) -> list[Example]:
    """Each baseline's sentence at ``k`` and each system's caption for some scored images of ``report``.

    ``images`` names the images (item keys; each must be among the report's
    scored images), else the first ``limit`` scored images in item order.
    Methods follow the report: its baselines, then its systems. ``seed`` is
    the evaluation's seed, so the random baseline chooses as in the report.
    """
    if k < 1:
        raise InputError("k must be at least 1", "--example-k")
    if images:
        unknown = [key for key in images if key not in report.keys]
        if unknown:
            raise InputError(f"image {unknown[0]!r} is not among the {len(report.keys)} scored images of project "
                             f"{project.name!r}", "--example-image")
        keys = list(dict.fromkeys(images))
    else:
        if limit < 0:
            raise InputError("the number of example images cannot be negative", "--examples")
        keys = list(report.keys[:limit])
    methods = list(report.baselines) + [f"system:{s}" for s in report.systems]
    by_key = {it.key: it for it in project.items}
    corpus = None
    out = []
    for key in keys:
        item = by_key[key]
        for method in methods:
            priors = None
            if needs_priors(method):
                if corpus is None:
                    corpus = learn_priors((train_project or project).items)
                priors = corpus if train_project is not None else held_out_priors(corpus, item)
            try:
                choice = explain_image(item, method, None if method.startswith("system:") else k, priors=priors,
                                       seed=seed, empty_descriptions=report.meta.get("empty_descriptions", "count"))
            except InputError:
                if method.startswith("system:"):  # no caption of that system for this image
                    continue
                raise
            out.append(Example(key, choice))
    return out
