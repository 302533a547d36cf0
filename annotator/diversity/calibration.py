"""µ of the lexical gap from data: the minimum-error point between rich and sparse ld distributions.

The lexical-gap study splits its rich (human) and its sparse (machine)
descriptions into sub-corpora, computes each sub-corpus's ld against the
rich descriptions as cr, and sets µ to the value with the Bayes minimum error
between the two ld distributions (0.81 on its data; its Fig. 5 plots the two
distributions). Here:

* sub-corpora are, by default, one per image: an image's references (rich)
  and its system captions (sparse) — ``split="image"``; or, with
  ``split=N``, each pool shuffled (seeded) and cut into sub-corpora of N
  descriptions (a last, shorter piece is left out);
* ld of a sub-corpus is L(sub-corpus) / L(cr) with the ratio's measure L and
  the chosen reference corpus cr (the project's references by default, which
  is the study's choice); a sub-corpus whose L is undefined (HD-D of fewer
  tokens than its sample size) is left out and counted;
* µ classifies a sub-corpus as rich when ld ≥ µ with equal prior weight on
  the two distributions. ``method="gaussian"`` (the default) fits a normal
  distribution to each set of ld values (mean and sample standard
  deviation) and takes the point between the two means where the densities
  cross — the Bayes minimum-error threshold for two normal classes;
  ``method="empirical"`` takes the midpoint between consecutive observed
  values that misclassifies the smallest share (the mean of the two error
  rates), ties going to the candidate nearest the midpoint of the two means.
  With fewer than two values on a side, or no spread, the empirical method
  is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..tokenize.words import tokenize_corpus
from .gap import RATIO_MEASURES
from .indices import DiversitySettings, measure
from .sources import DescriptionPools, ReferenceCorpus

__all__ = ["METHODS", "MuEstimate", "minimum_error_threshold", "estimate_mu", "project_mu_estimate"]

METHODS = ("gaussian", "empirical")


def _error(rich: np.ndarray, sparse: np.ndarray, mu: float) -> float:
    """Mean of the two error rates of the rule "rich when ld ≥ µ"."""
    return 0.5 * (float(np.mean(rich < mu)) + float(np.mean(sparse >= mu)))


def _empirical(rich: np.ndarray, sparse: np.ndarray) -> float:
    values = np.unique(np.concatenate((rich, sparse)))
    candidates = np.concatenate(([values[0] - 1.0], (values[1:] + values[:-1]) / 2, [values[-1] + 1.0]))
    errors = np.array([_error(rich, sparse, t) for t in candidates.tolist()])
    best = candidates[errors == errors.min()]
    middle = (rich.mean() + sparse.mean()) / 2
    return float(best[np.argmin(np.abs(best - middle))])


def _gaussian(rich: np.ndarray, sparse: np.ndarray) -> float:
    """Where the normal densities fitted to the two sets cross, between their means."""
    m_r, m_s = float(rich.mean()), float(sparse.mean())
    v_r, v_s = float(rich.var(ddof=1)), float(sparse.var(ddof=1))
    # log N(x; m_r, v_r) = log N(x; m_s, v_s)  ⇔  a x² + b x + c = 0
    a = 1 / (2 * v_s) - 1 / (2 * v_r)
    b = m_r / v_r - m_s / v_s
    c = m_s ** 2 / (2 * v_s) - m_r ** 2 / (2 * v_r) + 0.5 * math.log(v_s / v_r)
    if abs(a) < 1e-12 * max(abs(b), 1.0):
        return -c / b
    disc = max(b * b - 4 * a * c, 0.0)
    roots = [(-b + sign * math.sqrt(disc)) / (2 * a) for sign in (1, -1)]
    lo, hi = min(m_r, m_s), max(m_r, m_s)
    inside = [r for r in roots if lo <= r <= hi]
    middle = (m_r + m_s) / 2
    return min(inside or roots, key=lambda r: abs(r - middle))


def minimum_error_threshold(rich: Sequence[float], sparse: Sequence[float], method: str = "gaussian") -> tuple[float, str]:
    """(µ, method used) separating ``rich`` from ``sparse`` ld values with the least error (see the module docs)."""
    if method not in METHODS:
        raise InputError(f"the µ estimate is {' or '.join(METHODS)}, not {method!r}")
    r = np.asarray(rich, dtype=np.float64)
    s = np.asarray(sparse, dtype=np.float64)
    if r.size == 0 or s.size == 0:
        raise InputError("µ needs ld values of rich and of sparse sub-corpora; one side has none")
    if method == "gaussian" and min(r.size, s.size) >= 2 and r.std() > 0 and s.std() > 0:
        return _gaussian(r, s), "gaussian"
    return _empirical(r, s), "empirical"


@dataclass(frozen=True)
class MuEstimate:
    """The µ estimate with the two ld distributions it came from.

    ``rich``/``sparse`` hold the ld of each sub-corpus (named in
    ``rich_names``/``sparse_names``); ``error`` is the mean of the two error
    rates of "rich when ld ≥ µ" on them; ``dropped`` sub-corpora had no
    defined L. ``method`` is the method actually used.
    """

    mu: float
    method: str
    error: float
    rich: tuple[float, ...]
    sparse: tuple[float, ...]
    rich_names: tuple[str, ...]
    sparse_names: tuple[str, ...]
    measure: str
    split: str
    dropped: int
    reference: str
    seed: int = 0

    @property
    def separated(self) -> bool:
        """True when the rich sub-corpora are the more diverse on average (else µ means little)."""
        return bool(np.mean(self.rich) > np.mean(self.sparse))

    def summary(self) -> dict:
        """Mean, standard deviation and count of each distribution."""
        out = {}
        for name, values in (("rich", self.rich), ("sparse", self.sparse)):
            v = np.asarray(values)
            out[name] = {"n": int(v.size), "mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else None}
        return out

    def frame(self):
        """One row per sub-corpus: set (rich/sparse), sub-corpus name, ld."""
        import pandas as pd
        return pd.DataFrame({"set": ["rich"] * len(self.rich) + ["sparse"] * len(self.sparse),
                             "subcorpus": list(self.rich_names) + list(self.sparse_names),
                             "ld": list(self.rich) + list(self.sparse)})

    def to_dict(self) -> dict:
        """JSON-ready form: µ, method, error, the distributions' summaries and values."""
        return {"mu": self.mu, "method": self.method, "error": self.error, "measure": self.measure,
                "split": self.split, "dropped": self.dropped, "reference_corpus": self.reference, "seed": self.seed,
                "separated": self.separated, "summary": self.summary(),
                "rich": dict(zip(self.rich_names, self.rich)), "sparse": dict(zip(self.sparse_names, self.sparse))}

    def to_tables(self) -> dict:
        """Named tables for annotator.io.tables."""
        import pandas as pd
        head = pd.DataFrame({"setting": ["mu", "method", "error", "measure", "sub-corpora", "left out",
                                         "reference corpus (cr)"],
                             "value": [str(v) for v in (self.mu, self.method, self.error, self.measure, self.split,
                                                         self.dropped, self.reference)]})
        return {"mu estimate": head, "ld of sub-corpora": self.frame()}


def _subcorpora(pool: Sequence[Sequence[str]], keys: Sequence[str], split, rng, label: str):
    """(names, lists of text indices into the flattened pool) of the sub-corpora of one pool."""
    sizes = [len(p) for p in pool]
    starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    if split == "image":
        chosen = [(k, np.arange(starts[i], starts[i + 1])) for i, k in enumerate(keys) if sizes[i]]
    else:
        order = rng.permutation(int(starts[-1]))
        chosen = [(f"{label} {j + 1}", order[j * split:(j + 1) * split]) for j in range(len(order) // split)]
    return [c[0] for c in chosen], [c[1] for c in chosen]


def estimate_mu(pools: DescriptionPools, reference: ReferenceCorpus | Sequence[str], *,
                settings: DiversitySettings | None = None, measure_key: str = "hdd", split: str | int = "image",
                method: str = "gaussian", seed: int = 0) -> MuEstimate:
    """µ from the ld of rich (reference) and sparse (caption) sub-corpora against ``reference`` (cr)."""
    settings = settings or DiversitySettings()
    if measure_key not in RATIO_MEASURES:
        raise InputError(f"the diversity ratio can use {', '.join(RATIO_MEASURES)}, not {measure_key!r}")
    if split != "image":
        try:
            split = int(split)
        except (TypeError, ValueError):
            raise InputError(f"sub-corpora are 'image' or a number of descriptions, not {split!r}") from None
        if split < 1:
            raise InputError("a sub-corpus needs at least one description")
    texts = reference.texts if isinstance(reference, ReferenceCorpus) else tuple(reference)
    described = reference.describe() if isinstance(reference, ReferenceCorpus) else f"{len(texts):,} given texts"
    cr = measure(tokenize_corpus(texts, settings.tokens), measure_key, settings)
    if not (math.isfinite(cr) and cr != 0):
        raise InputError(f"the reference corpus has no defined {measure_key} ({described}); choose another cr "
                         "or measure")
    rng = np.random.default_rng(seed)
    sides = {}
    dropped = 0
    for label, pool in (("rich", pools.human), ("sparse", pools.machine)):
        corpus = tokenize_corpus([t for p in pool for t in p], settings.tokens)
        names, groups = _subcorpora(pool, pools.keys, split, rng, label)
        values, kept = [], []
        for name, group in zip(names, groups):
            v = measure(corpus.select(group), measure_key, settings)
            if math.isfinite(v):
                values.append(v / cr)
                kept.append(name)
            else:
                dropped += 1
        sides[label] = (tuple(values), tuple(kept))
    if not sides["rich"][0] or not sides["sparse"][0]:
        raise InputError(f"µ needs sub-corpora with a defined {measure_key} on both sides; "
                         f"{len(sides['rich'][0])} rich and {len(sides['sparse'][0])} sparse have one "
                         "(try larger sub-corpora or another measure)")
    mu, used = minimum_error_threshold(sides["rich"][0], sides["sparse"][0], method)
    error = _error(np.asarray(sides["rich"][0]), np.asarray(sides["sparse"][0]), mu)
    return MuEstimate(mu, used, error, sides["rich"][0], sides["sparse"][0], sides["rich"][1], sides["sparse"][1],
                      measure_key, str(split), dropped, described, seed)


def project_mu_estimate(store, project: str, *, systems: Sequence[str] | None = None,
                        reference: ReferenceCorpus | None = None, settings: DiversitySettings | None = None,
                        measure_key: str = "hdd", split: str | int = "image", method: str = "gaussian",
                        seed: int = 0) -> MuEstimate:
    """:func:`estimate_mu` of a stored project (cr: ``reference``, by default the project's references)."""
    from .sources import project_pools, reference_corpus
    return estimate_mu(project_pools(store, project, systems), reference or reference_corpus(store, project),
                       settings=settings, measure_key=measure_key, split=split, method=method, seed=seed)
