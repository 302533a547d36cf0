"""The Lexical diversity page's computations, cached per project, settings and reference corpus: the report, the
per-image pools, µ, rich and sparse descriptions, the correlations; and the texts (Texts) they are keyed on."""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from ... import ui
from ...diversity import DiversitySettings, GapSettings, MTLD_PRESETS, project_diversity
from ...diversity.sources import reference_corpus
from ...tokenize.words import TokenSettings



def _settings(key: str) -> tuple[DiversitySettings, GapSettings]:
    s = json.loads(key)
    from dataclasses import replace
    mtld = replace(MTLD_PRESETS[s["variant"]], threshold=s["threshold"])
    return (DiversitySettings(tokens=TokenSettings(lowercase=s["lower"], strip_punctuation=s["strip"]),
                              hdd_draws=s["draws"], mattr_window=s["window"], mtld=mtld),
            GapSettings(measure=s["measure"], mu=s["mu"], alpha=s["alpha"]))


def _reference_corpus(name: str, choice: tuple, upload: bytes | None):
    ref_project, ref_system, file_name = choice
    return reference_corpus(ui.get_store(), name, reference_project=ref_project, system=ref_system,
                            file=upload, file_name=file_name)


@st.cache_data(show_spinner="Measuring lexical diversity…", max_entries=16)
def cached_report(url: str, name: str, fingerprint: tuple, key: str, shuffles: int, choice: tuple, ref_fp: tuple,
            upload: bytes | None):
    settings, gap = _settings(key)
    return project_diversity(ui.get_store(), name, settings=settings, gap=gap, curves=True, curve_shuffles=shuffles,
                             reference=_reference_corpus(name, choice, upload))


@st.cache_data(show_spinner=False, max_entries=4)
def cached_pools(url: str, name: str, fingerprint: tuple):
    from ...diversity.sources import project_pools
    return project_pools(ui.get_store(), name)


@st.cache_data(show_spinner="Measuring sub-corpora…", max_entries=8)
def cached_mu(url: str, name: str, fingerprint: tuple, key: str, choice: tuple, ref_fp: tuple, upload: bytes | None,
        split, method: str):
    from ...diversity.calibration import estimate_mu
    settings, gap = _settings(key)
    return estimate_mu(cached_pools(url, name, fingerprint), _reference_corpus(name, choice, upload), settings=settings,
                       measure_key=gap.measure, split=split, method=method)


@st.cache_data(show_spinner="Drawing ground truth and scoring…", max_entries=8)
def cached_rich_sparse(url: str, name: str, fingerprint: tuple, draws: int, truth: int, seed: int, metrics: tuple,
                 tokenize: str):
    from ...diversity.rich_sparse import DrawSettings, rich_sparse_table
    return rich_sparse_table(cached_pools(url, name, fingerprint), metrics=list(metrics),
                             settings=DrawSettings(draws=draws, ground_truth=truth, seed=seed), tokenize=tokenize)


@st.cache_data(show_spinner="Scoring captions and correlating…", max_entries=16)
def cached_correlations(url: str, name: str, fp: tuple, hfp: tuple, key: str, metrics: tuple, choice: tuple,
                  ref_fp: tuple, upload: bytes | None, tokenize: str):
    from ...diversity.correlation import project_correlations
    settings, gap = _settings(key)
    return project_correlations(ui.get_store(), name, compute_metrics=metrics or None, settings=settings, gap=gap,
                                reference=_reference_corpus(name, choice, upload), tokenize=tokenize)


@dataclass(frozen=True)
class Texts:
    """The project's texts and the reference corpus chosen in this run, as the cached computations take them."""

    url: str
    project: str
    fp: tuple
    settings_key: str
    ref_choice: tuple
    ref_fp: tuple
    ref_bytes: bytes | None
