"""The Lexical diversity page's settings: the ratio measure, µ and α, the measures' parameters, tokens and the
reference corpus cr, as one choice (Choices) the page computes from."""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from ...diversity import MEASURE_LABELS, MTLD_PRESETS, RATIO_MEASURES
from ...diversity.gap import GAP_PRESETS, gap_preset
from ...diversity.sources import reference_options, training_corpus



def _apply_gap_preset() -> None:
    """The preset chosen sets µ and α (the user may still change them)."""
    mu, alpha = gap_preset(st.session_state["div_gap_preset"])
    st.session_state["div_mu"], st.session_state["div_alpha"] = mu, alpha


@dataclass(frozen=True)
class Choices:
    """What the Settings expander chose: the measures' settings (as the cached computations' key), the ratio measure
    and µ in use, the TTR curves' orders, and the reference corpus."""

    settings_key: str
    measure: str
    mu: float
    shuffles: int
    training: object  # the project's named training corpus, or None
    ref_project: str | None
    ref_system: str | None
    ref_upload: object  # an uploaded file, or None


MTLD_LABELS = {"lexicalrichness": "TTR ≤ threshold, no minimum length (lexicalrichness)",
               "mccarthy-jarvis": "TTR < threshold, factors ≥ 10 tokens (McCarthy & Jarvis; taaled, lexical-diversity)",
               "taaled-mean-length": "as McCarthy & Jarvis, mean factor length (taaled's default)"}


def settings_form(store, project: str) -> Choices:
    """The Settings expander: the ratio measure, µ and α, the measures' parameters, tokens and the reference corpus."""
    with st.expander("Settings", expanded=False):
        c1, c2, c3 = st.columns(3)
        measure = c1.selectbox("Measure for ld", RATIO_MEASURES, index=0, key="div_measure",
                               format_func=lambda m: MEASURE_LABELS.get(m, m))
        c1.selectbox("µ and α", list(GAP_PRESETS), key="div_gap_preset", on_change=_apply_gap_preset,
                     format_func=lambda p: GAP_PRESETS[p]["about"],
                     help="The study's text gives µ 0.81, α 5, which do not reproduce its Table 3; the fit to "
                          "Table 3 does (docs/lexical_gap.md, Errata).")
        mu = c2.number_input("µ (ld where Lg = 0.5)", value=0.81, step=0.01, format="%.2f", key="div_mu")
        alpha = c3.number_input("α (steepness)", value=5.0, step=0.5, min_value=0.1, key="div_alpha")
        c1, c2, c3 = st.columns(3)
        draws = c1.number_input("HD-D sample size", value=42, min_value=1, step=1, key="div_draws")
        window = c2.number_input("MATTR window", value=50, min_value=1, step=10, key="div_window")
        threshold = c3.number_input("MTLD threshold", value=0.72, min_value=0.05, max_value=0.95, step=0.01, key="div_thr")
        variant = st.selectbox("MTLD variant", list(MTLD_PRESETS), format_func=lambda v: MTLD_LABELS[v], key="div_mtld")
        c1, c2, c3 = st.columns(3)
        lowercase = c1.checkbox("Lower-case", value=True, key="div_lower")
        strip = c2.checkbox("Strip punctuation", value=True, key="div_punct")
        shuffles = c3.number_input("Caption orders per TTR curve", value=10, min_value=1, max_value=100, key="div_shuffles")
        training, ref_project, ref_system, ref_upload = _reference_choice(store, project)

    settings_key = json.dumps({"measure": measure, "mu": float(mu), "alpha": float(alpha), "draws": int(draws),
                               "window": int(window), "threshold": float(threshold), "variant": variant,
                               "lower": bool(lowercase), "strip": bool(strip)}, sort_keys=True)

    return Choices(settings_key, measure, float(mu), int(shuffles), training, ref_project, ref_system, ref_upload)


def _reference_choice(store, project: str) -> tuple:
    """The reference corpus cr: the project's training corpus (or its own references), another project's
    references, a system's captions or an uploaded file. Returns (training, project, system, upload)."""
    training = training_corpus(store, project)
    ref_kinds = {"own": (f"Its training corpus ({training.describe()})" if training is not None
                         else "This project's references"), "project": "Another project's references",
                 "captions": "A system's captions", "file": "A text file"}
    ref_kind = st.radio("Reference corpus cr", list(ref_kinds), format_func=ref_kinds.get, horizontal=True,
                        key="div_ref_kind", help="The study compares a system with the corpus it was trained on. "
                        "A lead names a project's training corpus once with `annotator settings --project P "
                        "--training-corpus P2`; without one, the project's references stand in for it unless you "
                        "choose another corpus.")
    ref_project = ref_system = ref_upload = None
    choices = reference_options(store)
    if ref_kind == "project":
        others = [p for p in choices.projects if p != project]
        if others:
            ref_project = st.selectbox("Project whose references form cr", others, key="div_ref_project")
        else:
            st.info("There is no other project; the project's own references are used.")
    elif ref_kind == "captions":
        ref_project = st.selectbox("Project", choices.projects, index=choices.projects.index(project),
                                   key="div_ref_caption_project")
        if choices.systems.get(ref_project):
            ref_system = st.selectbox("System whose captions form cr", choices.systems[ref_project], key="div_ref_system")
        else:
            st.info("That project has no system captions; the project's own references are used.")
            ref_project = None
    elif ref_kind == "file":
        ref_upload = st.file_uploader("Text file, one description per line (UTF-8)", type=["txt"], key="div_ref_file")
        if ref_upload is None:
            st.info("Upload a file to use it; until then the project's own references are used.")
    return training, ref_project, ref_system, ref_upload
