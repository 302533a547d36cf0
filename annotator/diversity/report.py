"""One report object per comparison: the measures of a reference corpus and of each system, ld and Lg."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..tokenize.words import TokenCorpus, tokenize_corpus
from .curves import TTRCurve, ttr_curve
from .gap import GapSettings, lexical_diversity_ratio, lexical_gap
from .indices import MEASURES, DiversitySettings, measures
from .profile import Profile
from .readability import READABILITY, readability
from .sources import ReferenceCorpus, reference_corpus

__all__ = ["CorpusDiversity", "DiversityReport", "diversity_report", "project_diversity"]


@dataclass
class CorpusDiversity:
    """Measures of one corpus (references or a system's captions)."""

    name: str
    texts: int
    measures: dict[str, float]
    ld: float | None = None
    lexical_gap: float | None = None
    #: Readability measures (annotator.diversity.readability); empty when the texts came pre-tokenised.
    readability: dict[str, float] = field(default_factory=dict)

    def row(self) -> dict:
        """One table row: name, texts, the measures, ld, Lg and the readability measures."""
        row = {"corpus": self.name, "texts": self.texts, **self.measures}
        row["ld"] = self.ld
        row["lexical_gap"] = self.lexical_gap
        for k in READABILITY:
            row[k] = self.readability.get(k, math.nan)
        return row


@dataclass
class DiversityReport:
    """Diversity of a reference corpus and of systems, with each system's ld and Lg.

    ``curves`` maps corpus name (the reference corpus's, ``"references"`` for
    the project's own, or a system) to its TTR curve when curves were asked
    for. ``reference`` records which texts formed the reference corpus cr when
    it was chosen (:mod:`annotator.diversity.sources`).
    """

    references: CorpusDiversity
    systems: dict[str, CorpusDiversity]
    settings: DiversitySettings
    gap: GapSettings
    project: str | None = None
    curves: dict[str, TTRCurve] = field(default_factory=dict)
    reference: ReferenceCorpus | None = None

    def describe_reference(self) -> str:
        """What the reference corpus cr is, e.g. ``references of project 'coco' (25,010 texts)``."""
        if self.reference is not None:
            return self.reference.describe()
        return f"the given reference texts ({self.references.texts:,} texts)"

    def to_dict(self) -> dict:
        """``{"references": {measures}, "systems": {name: {measures, "ld", "lexical_gap"}}, "settings": …}``."""
        refs = {"texts": self.references.texts, **self.references.measures, **self.references.readability}
        systems = {name: {"texts": c.texts, **c.measures, "ld": c.ld, "lexical_gap": c.lexical_gap, **c.readability}
                   for name, c in self.systems.items()}
        return {"references": _json_floats(refs), "systems": {k: _json_floats(v) for k, v in systems.items()},
                "settings": {**self.settings.to_dict(), "ratio_measure": self.gap.measure, "mu": self.gap.mu,
                             "alpha": self.gap.alpha, **({"project": self.project} if self.project else {}),
                             **({"reference_corpus": self.reference.to_dict()} if self.reference else {})}}

    def to_frame(self):
        """One row per corpus (references first) with every measure, ld and Lg."""
        import pandas as pd
        rows = [self.references.row()] + [c.row() for c in self.systems.values()]
        return pd.DataFrame(rows, columns=["corpus", "texts", *MEASURES, "ld", "lexical_gap", *READABILITY])

    def gap_frame(self):
        """The compact ld / Lg table: one row per system, with the readability measures beside ld."""
        import pandas as pd
        return pd.DataFrame([{"system": n, self.gap.measure: c.measures.get(self.gap.measure), "ld": c.ld,
                              "lexical_gap": c.lexical_gap,
                              **{k: c.readability.get(k, math.nan) for k in READABILITY}}
                             for n, c in self.systems.items()],
                            columns=["system", self.gap.measure, "ld", "lexical_gap", *READABILITY])

    def curves_frame(self):
        """All TTR curves in long form: corpus, tokens, ttr, sd."""
        import pandas as pd
        frames = [c.to_frame(name) for name, c in self.curves.items()]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["corpus", "tokens", "ttr", "sd"])

    def settings_frame(self):
        """The settings behind the numbers, one ``setting``/``value`` row each (reference corpus first)."""
        import pandas as pd
        rows = [("reference corpus (cr)", self.describe_reference()),
                *([("note", self.reference.note)] if self.reference is not None and self.reference.note else []),
                ("ratio measure", self.gap.measure), ("mu", self.gap.mu), ("alpha", self.gap.alpha),
                ("tokens", self.settings.tokens.describe()), ("HD-D sample size", self.settings.hdd_draws),
                ("MTLD", self.settings.mtld.describe()), ("MATTR window", self.settings.mattr_window)]
        return pd.DataFrame({"setting": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})

    def to_tables(self) -> dict:
        """Named tables for the writers in annotator.io.tables (the settings, cr included, last)."""
        tables = {"Lexical diversity": self.to_frame(), "Lexical gap": self.gap_frame()}
        if self.curves:
            tables["TTR curves"] = self.curves_frame()
        tables["Settings"] = self.settings_frame()
        return tables


def _json_floats(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = None
        elif isinstance(v, (np.floating, np.integer)):
            out[k] = v.item()
        else:
            out[k] = v
    return out


def diversity_report(references: Sequence[str] | TokenCorpus | ReferenceCorpus, systems: Mapping[str, Sequence[str] | TokenCorpus], *,
                     settings: DiversitySettings | None = None, gap: GapSettings | None = None,
                     curves: bool = False, curve_points: int = 100, curve_shuffles: int = 10, seed: int = 0,
                     project: str | None = None) -> DiversityReport:
    """Measures of a reference corpus and of each system, with ld and Lg per system.

    Texts are tokenised here with ``settings.tokens`` (a TokenCorpus is used as
    it is). ``references`` may be a :class:`ReferenceCorpus`, recorded in the
    report. With ``curves`` the TTR curves are computed as well. The readability
    measures of :mod:`annotator.diversity.readability` are computed from the
    raw texts (not for a TokenCorpus).
    """
    settings = settings or DiversitySettings()
    gap = gap or GapSettings()
    source = references if isinstance(references, ReferenceCorpus) else None
    if source is not None:
        references = list(source.texts)

    def corpus(texts):
        return texts if isinstance(texts, TokenCorpus) else tokenize_corpus(texts, settings.tokens)

    def read(texts) -> dict[str, float]:
        return {} if isinstance(texts, TokenCorpus) else readability(texts)

    ref_profile = Profile(corpus(references))
    ref = CorpusDiversity(source.label if source else "references", ref_profile.corpus.n_texts,
                          measures(ref_profile, settings), readability=read(references))
    report = DiversityReport(ref, {}, settings, gap, project, reference=source)
    if curves:
        report.curves[ref.name] = ttr_curve(ref_profile, points=curve_points, shuffles=curve_shuffles, seed=seed)
    for name, texts in systems.items():
        prof = Profile(corpus(texts))
        m = measures(prof, settings)
        ld = lexical_diversity_ratio(m[gap.measure], ref.measures[gap.measure])
        report.systems[name] = CorpusDiversity(name, prof.corpus.n_texts, m, ld, lexical_gap(ld, gap.mu, gap.alpha),
                                               read(texts))
        if curves:
            report.curves[name] = ttr_curve(prof, points=curve_points, shuffles=curve_shuffles, seed=seed)
    return report


def project_diversity(store, project: str, *, systems: Sequence[str] | None = None,
                      settings: DiversitySettings | None = None, gap: GapSettings | None = None,
                      curves: bool = False, curve_points: int = 100, curve_shuffles: int = 10,
                      seed: int = 0, reference: ReferenceCorpus | None = None) -> DiversityReport:
    """:func:`diversity_report` of a stored project: a reference corpus against its systems' captions.

    The reference corpus cr is ``reference`` (see
    :func:`annotator.diversity.sources.reference_corpus`), by default the
    training corpus the project's settings name, else every reference
    description of the project's items; each system corpus is all
    captions of that system. ``systems`` restricts (and orders) the systems;
    an unknown name raises NotFound.
    """
    from ..store.diversity import caption_texts
    refs = reference or reference_corpus(store, project)
    by_system = caption_texts(store, project, systems)
    return diversity_report(refs, {name: [r.text for r in rows] for name, rows in by_system.items()},
                            settings=settings, gap=gap, curves=curves, curve_points=curve_points,
                            curve_shuffles=curve_shuffles, seed=seed, project=project)
