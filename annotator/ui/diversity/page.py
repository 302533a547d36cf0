"""The lexical diversity page: how varied is each system's vocabulary next to the references, and does it track human
judgement?"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ... import ui
from ..widgets.palette import category_colour, series_colours
from ...accounts.access import LEADS
from ...diversity import (
    DiversitySettings, GapSettings, MEASURE_LABELS, MTLD_PRESETS, RATIO_MEASURES, lexical_gap, project_diversity,
)
from ...diversity.gap import GAP_PRESETS, gap_preset
from ...diversity.readability import READABILITY_LABELS
from ...diversity.sources import reference_corpus, reference_options, training_corpus
from ...errors import AnnotatorError
from ...io.tables import FORMATS, file_name, mime_type, write_table
from ...metric_settings import paper_tokenize_note, project_tokenize, tokenize_header
from ...metrics import REGISTRY
from ...store.human_scores import score_names, scores_fingerprint
from ...tokenize.words import TokenSettings
from ..widgets.downloads import table_download


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
def _report(url: str, name: str, fingerprint: tuple, key: str, shuffles: int, choice: tuple, ref_fp: tuple,
            upload: bytes | None):
    settings, gap = _settings(key)
    return project_diversity(ui.get_store(), name, settings=settings, gap=gap, curves=True, curve_shuffles=shuffles,
                             reference=_reference_corpus(name, choice, upload))


@st.cache_data(show_spinner=False, max_entries=4)
def _pools(url: str, name: str, fingerprint: tuple):
    from ...diversity.sources import project_pools
    return project_pools(ui.get_store(), name)


@st.cache_data(show_spinner="Measuring sub-corpora…", max_entries=8)
def _mu(url: str, name: str, fingerprint: tuple, key: str, choice: tuple, ref_fp: tuple, upload: bytes | None,
        split, method: str):
    from ...diversity.calibration import estimate_mu
    settings, gap = _settings(key)
    return estimate_mu(_pools(url, name, fingerprint), _reference_corpus(name, choice, upload), settings=settings,
                       measure_key=gap.measure, split=split, method=method)


@st.cache_data(show_spinner="Drawing ground truth and scoring…", max_entries=8)
def _rich_sparse(url: str, name: str, fingerprint: tuple, draws: int, truth: int, seed: int, metrics: tuple,
                 tokenize: str):
    from ...diversity.rich_sparse import DrawSettings, rich_sparse_table
    return rich_sparse_table(_pools(url, name, fingerprint), metrics=list(metrics),
                             settings=DrawSettings(draws=draws, ground_truth=truth, seed=seed), tokenize=tokenize)


@st.cache_data(show_spinner="Scoring captions and correlating…", max_entries=16)
def _correlations(url: str, name: str, fp: tuple, hfp: tuple, key: str, metrics: tuple, choice: tuple,
                  ref_fp: tuple, upload: bytes | None, tokenize: str):
    from ...diversity.correlation import project_correlations
    settings, gap = _settings(key)
    return project_correlations(ui.get_store(), name, compute_metrics=metrics or None, settings=settings, gap=gap,
                                reference=_reference_corpus(name, choice, upload), tokenize=tokenize)


@dataclass(frozen=True)
class _Texts:
    """The project's texts and the reference corpus chosen in this run, as the cached computations take them."""

    url: str
    project: str
    fp: tuple
    settings_key: str
    ref_choice: tuple
    ref_fp: tuple
    ref_bytes: bytes | None


def _apply_gap_preset() -> None:
    """The preset chosen sets µ and α (the user may still change them)."""
    mu, alpha = gap_preset(st.session_state["div_gap_preset"])
    st.session_state["div_mu"], st.session_state["div_alpha"] = mu, alpha


def _mu_section(texts: _Texts, mu: float, measure: str):
    """µ from rich and sparse sub-corpora (the lexical-gap study's Fig. 5), once switched on: the estimate, else None."""
    st.subheader("µ from rich and sparse sub-corpora")
    if not st.toggle("Estimate µ from this project", key="div_mu_on",
                     help="ld of every image's references (rich) and of its captions (sparse) against cr; µ is where "
                          "the two distributions are best told apart, as the lexical-gap study chose its 0.81."):
        return None
    c1, c2, c3 = st.columns(3)
    split_kind = c1.selectbox("Sub-corpora", ["image", "groups"], key="div_mu_split",
                              format_func={"image": "one per image", "groups": "random groups"}.get)
    group_size = c2.number_input("Descriptions per group", value=50, min_value=1, step=10, key="div_mu_group",
                                 disabled=split_kind == "image")
    mu_method = c3.selectbox("Method", ["gaussian", "empirical"], key="div_mu_method",
                             format_func={"gaussian": "crossing of normal fits", "empirical": "best observed split"}.get)

    try:
        mu_estimate = _mu(texts.url, texts.project, texts.fp, texts.settings_key, texts.ref_choice, texts.ref_fp,
                          texts.ref_bytes, "image" if split_kind == "image" else int(group_size), mu_method)
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    dist = mu_estimate.frame()
    hist = alt.Chart(dist).mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("ld:Q", bin=alt.Bin(maxbins=30), title="ld of a sub-corpus"),
        y=alt.Y("count():Q", stack=None, title="sub-corpora"), color=category_colour("set", "Descriptions"))
    rules = pd.DataFrame({"ld": [mu_estimate.mu, float(mu)], "line": ["estimated µ", "µ in use"]})
    rule = alt.Chart(rules).mark_rule(strokeWidth=2).encode(
        x="ld:Q", strokeDash=alt.StrokeDash("line:N", title=""), tooltip=["line", alt.Tooltip("ld:Q", format=".3f")])
    st.altair_chart((hist + rule).properties(height=280), width="stretch")
    summary = mu_estimate.summary()
    st.caption(f"Estimated µ = {mu_estimate.mu:.3f} ({mu_estimate.method}); {mu_estimate.error:.1%} of "
               f"sub-corpora on the wrong side (mean of both sides). Rich: {summary['rich']['n']} sub-corpora, mean "
               f"ld {summary['rich']['mean']:.3f}; sparse: {summary['sparse']['n']}, mean "
               f"{summary['sparse']['mean']:.3f}" + (f"; {mu_estimate.dropped} left out without a defined "
                                                      f"{MEASURE_LABELS[measure]}" if mu_estimate.dropped else "")
               + ". Set µ in the settings above to use it.")
    if not mu_estimate.separated:
        st.warning("Here the references are not more diverse than the captions, so this µ does not separate "
                   "rich from sparse descriptions.")
    return mu_estimate


def _rich_sparse_section(store, texts: _Texts):
    """Human and machine descriptions scored against each other (the lexical-gap study's Section 3.2), once
    switched on: the table, else None."""
    st.subheader("Rich and sparse descriptions")
    if not st.toggle("Score human and machine descriptions against each other", key="div_rs_on",
                     help="For every image, draw ground-truth descriptions from the references or from the captions "
                          "and score the rest, many times over (Section 3.2 of the lexical-gap study)."):
        return None
    c1, c2, c3, c4 = st.columns(4)
    rs_draws = c1.number_input("Draws", value=1000, min_value=1, max_value=100_000, step=100, key="div_rs_draws")
    rs_truth = c2.number_input("Ground-truth descriptions", value=5, min_value=1, max_value=50, key="div_rs_truth")
    rs_seed = c3.number_input("Seed", value=0, min_value=0, step=1, key="div_rs_seed")
    rs_metrics = c4.multiselect("Metrics", list(REGISTRY.available()), default=list(REGISTRY.defaults(in_process_only=True)),
                                format_func=REGISTRY.label, key="div_rs_metrics")

    try:
        rich_sparse = _rich_sparse(texts.url, texts.project, texts.fp, int(rs_draws), int(rs_truth), int(rs_seed),
                                   tuple(rs_metrics), project_tokenize(store, texts.project))
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    table = rich_sparse.table()
    table.columns = [f"{a} · {b}" for a, b in table.columns]
    ui.show_table(table, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in table.columns})
    st.caption(f"Mean over {rich_sparse.settings.draws} draws of {rich_sparse.settings.ground_truth} ground-truth "
               "descriptions per image. Human: the references; machine: the systems' captions. Images per cell: "
               + "; ".join(f"{c.ground_truth}/{c.candidates} {c.images}" for c in rich_sparse.cells) + ".")
    st.caption("Metric input: " + tokenize_header(rich_sparse.tokenize) + "; "
               + paper_tokenize_note(rich_sparse.tokenize, "lexical-gap"))
    for note in rich_sparse.notes:
        st.caption(ui.md_escape(note))
    return rich_sparse


@dataclass(frozen=True)
class _Choices:
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


def render(ctx: ui.PageContext) -> None:
    """Draw the lexical diversity of the selected project's systems for ``ctx``."""
    ui.page_header(ctx)
    store, project = ctx.store, ctx.project
    choices = _settings_form(store, project)
    report, texts = _measure(store, project, choices)
    _corpus_warnings(report)
    _measures_table(report)
    if report.systems:
        _gap_section(report, choices.measure)
    _ttr_curves(report, texts, choices.shuffles)
    mu_estimate = _mu_section(texts, choices.mu, choices.measure)
    rich_sparse = _rich_sparse_section(store, texts)
    correlation = _correlation_section(ctx, texts, report.systems)
    _export(project, report, mu_estimate, rich_sparse, correlation)


def _settings_form(store, project: str) -> _Choices:
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

    return _Choices(settings_key, measure, float(mu), int(shuffles), training, ref_project, ref_system, ref_upload)


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


def _measure(store, project: str, choices: _Choices) -> tuple:
    """The diversity report of the project against the chosen reference corpus, and the texts the other sections
    compute from; an error stops the page."""
    try:
        from ...store.diversity import texts_fingerprint
        fp = texts_fingerprint(store, project)
        ref_upload, training = choices.ref_upload, choices.training
        ref_choice = (choices.ref_project, choices.ref_system, ref_upload.name if ref_upload is not None else None)
        ref_bytes = ref_upload.getvalue() if ref_upload is not None else None
        ref_fp = texts_fingerprint(store, choices.ref_project) if choices.ref_project else () if training is None else \
            (training.project, training.system, texts_fingerprint(store, training.project))
        report = _report(store.url, project, fp, choices.settings_key, choices.shuffles, ref_choice, ref_fp, ref_bytes)
    except (AnnotatorError, ValueError) as exc:
        st.error(ui.md_escape(str(exc)))
        st.stop()
    return report, _Texts(store.url, project, fp, choices.settings_key, ref_choice, ref_fp, ref_bytes)


def _corpus_warnings(report) -> None:
    """Nothing to compare: no system captions, or a reference corpus without words."""
    if not report.systems:
        st.info("This project has no system captions yet, so there is nothing to compare with the references.")
    if report.references.measures["tokens"] == 0:
        st.warning("This project has no reference descriptions: the ratio ld and the lexical gap cannot be computed."
                   if report.reference is None or report.reference.own else
                   "The chosen reference corpus holds no words: the ratio ld and the lexical gap cannot be computed.")


def _measures_table(report) -> None:
    """Every measure of every corpus, with the reference corpus and the settings they were computed with."""
    st.subheader("Measures per corpus")
    frame = report.to_frame()
    shown = frame.rename(columns={"corpus": "Corpus", **MEASURE_LABELS, **READABILITY_LABELS})
    three = {label: st.column_config.NumberColumn(format="%.3f") for label in
             [*(MEASURE_LABELS[m] for m in ("ttr", "rttr", "logttr", "hdd", "mtld", "mattr", "ld", "lexical_gap")),
              *READABILITY_LABELS.values()]}
    # Two tables the page's width holds whole (sixteen columns in one ran past its right edge): the size and
    # diversity measures, then the ratio, the gap and readability, each starting with the corpus.
    split = [MEASURE_LABELS[m] for m in MEASURE_LABELS if m not in ("ld", "lexical_gap")]
    for columns in (split, [MEASURE_LABELS["ld"], MEASURE_LABELS["lexical_gap"], *READABILITY_LABELS.values()]):
        part = shown[["Corpus", *columns]]
        ui.show_table(part, hide_index=True, width="stretch", column_config={c: three[c] for c in columns if c in three})
    st.caption(ui.md_escape(f"Reference corpus cr: {report.describe_reference()}."
                            + (f" Note: {report.reference.note}." if report.reference and report.reference.note
                               else "")))
    st.caption(f"Tokens: {report.settings.tokens.describe()}. HD-D with samples of {report.settings.hdd_draws} tokens "
               f"(empty when a corpus is shorter); {report.settings.mtld.describe()}, forwards and backwards averaged; "
               f"MATTR over windows of {report.settings.mattr_window} tokens.")


def _colours(report) -> dict[str, str]:
    """Each corpus's colour: the systems' as on every page (the project's systems in order), then the references."""
    refs = report.references.name
    return series_colours([*(name for name in report.curves if name != refs), refs])


def _gap_section(report, measure: str) -> None:
    """Each system's ratio ld and lexical gap Lg, beside the gap's curve with the systems on it."""
    st.subheader("Diversity ratio and lexical gap")
    gap_df = report.gap_frame().rename(columns={"system": "System", measure: MEASURE_LABELS[measure],
                                                "ld": "ld", "lexical_gap": "Lg", **READABILITY_LABELS})
    # The table the page's width (its readability columns ran past a narrow column's edge), the curve below it.
    ui.show_table(gap_df, hide_index=True, width="stretch",
                  column_config={c: st.column_config.NumberColumn(format="%.3f") for c in gap_df.columns if c != "System"})
    left, right = st.columns([2, 3])
    left.caption(f"ld = {MEASURE_LABELS[measure]}(system) / {MEASURE_LABELS[measure]}(cr), "
                 f"{report.references.measures[measure]:.3f} for cr; "
                 f"Lg = 1 / (1 + exp(−{report.gap.alpha:g} (ld − {report.gap.mu:g}))). Readability (textstat, "
                 "each description one sentence): the measures the lexical-gap study tested and found not to track "
                 "description quality; their correlation with human scores is below.")
    xs = np.linspace(0.0, 1.5, 151)
    curve = pd.DataFrame({"ld": xs, "Lg": lexical_gap(xs, report.gap.mu, report.gap.alpha)})
    pts = gap_df.dropna(subset=["ld"])
    chart = alt.Chart(curve).mark_line(color="#888").encode(x=alt.X("ld:Q", title="ld"), y=alt.Y("Lg:Q", title="Lg"))
    if not pts.empty:
        chart = chart + alt.Chart(pts).mark_point(size=80, filled=True).encode(
            x="ld:Q", y="Lg:Q", tooltip=["System", "ld", "Lg"],
            color=category_colour("System", domain=list(pts["System"]), colours=_colours(report)))
    right.altair_chart(chart.properties(height=220), width="stretch")


def _ttr_curves(report, texts: _Texts, shuffles: int) -> None:
    """TTR as the tokens are read: the whole corpora beside one chosen image's references and captions."""
    st.subheader("TTR curves")
    pools = _pools(texts.url, texts.project, texts.fp)
    curves = report.curves_frame()
    # One colour per series on both charts, a system's as on every page; an image's captions take the first
    # system's, its references the reference corpus's.
    corpora = list(report.curves)
    colours = _colours(report)
    human, machine = "references (human)", "captions (machine)"
    systems, fallback = [n for n in corpora if n != report.references.name], series_colours([machine, human])
    colours[human] = colours.get(report.references.name, fallback[human])
    colours[machine] = colours[systems[0]] if systems else fallback[machine]
    corpus_col, image_col = st.columns(2)
    with corpus_col:
        if curves.empty:
            st.info("No tokens to draw.")
        else:
            lengths = {n: int(c.tokens[-1]) for n, c in report.curves.items() if len(c.tokens)}
            equal = st.checkbox("Only up to the length of the shortest corpus", value=False, key="div_equal",
                                help="TTR falls as a text grows, so corpora are best compared at the same number of tokens.")
            if equal and lengths:
                curves = curves[curves["tokens"] <= min(lengths.values())]
            line = alt.Chart(curves).mark_line().encode(
                x=alt.X("tokens:Q", title="tokens read"), y=alt.Y("ttr:Q", title="TTR"),
                color=category_colour("corpus", "Corpus", domain=corpora, colours=colours),
                tooltip=["corpus", "tokens", alt.Tooltip("ttr:Q", format=".3f")])
            band = alt.Chart(curves.assign(lo=curves["ttr"] - curves["sd"], hi=curves["ttr"] + curves["sd"])).mark_area(
                opacity=0.15).encode(x="tokens:Q", y="lo:Q", y2="hi:Q",
                                     color=category_colour("corpus", "Corpus", domain=corpora, colours=colours))
            st.altair_chart((band + line).properties(height=320, title="Whole corpora"), width="stretch")
            st.caption(f"Mean TTR over {report.curves[report.references.name].shuffles} random orders of the captions "
                       "(seed 0); the band is ± one standard deviation. Steeper, lower curves mean more repeated words.")
    with image_col:
        if not pools.keys:
            st.info("No images with descriptions.")
        else:
            from ...diversity.curves import image_curves
            image_key = st.selectbox("Image", pools.keys, key="div_image")
            one = image_curves(pools, [image_key], tokens=report.settings.tokens, shuffles=int(shuffles))[0].to_frame()
            one["descriptions"] = one["corpus"].map({"human": human, "machine": machine})
            chart = alt.Chart(one).mark_line(point=True).encode(
                x=alt.X("tokens:Q", title="tokens read"), y=alt.Y("ttr:Q", title="TTR"),
                color=category_colour("descriptions", "Descriptions", domain=[human, machine], colours=colours),
                tooltip=["descriptions", "tokens", alt.Tooltip("ttr:Q", format=".3f")])
            st.altair_chart(chart.properties(height=320, title="One image"), width="stretch")
            st.caption("The image's references and its systems' captions, each in random orders as for the corpora. "
                       "In the lexical-gap study the machine descriptions' curves fall faster.")


def _correlation_section(ctx: ui.PageContext, texts: _Texts, systems: list[str]):
    """Correlation of the metrics (plain and weighted by ld or Lg) with a stored human score; leads may import
    scores here. The correlations, or None."""
    store, project = ctx.store, texts.project
    st.subheader("Correlation with human judgements")

    names = score_names(store, project)
    if ctx.user.role in LEADS:
        names = _import_scores(store, project, systems, names)

    if not names:
        st.info("No human scores are stored for this project yet"
                + ("." if ctx.user.role in LEADS else "; a lead or admin can import them here or with "
                   "`annotator human-scores import`."))
        return None
    c1, c2 = st.columns(2)
    human = c1.selectbox("Human score", names, key="div_human")
    options = list(REGISTRY.available())
    chosen = c2.multiselect("Metrics", options, default=list(REGISTRY.defaults(in_process_only=True)),
                            format_func=REGISTRY.label, key="div_metrics",
                            help="Metrics that cannot run here (METEOR without Java) are not offered.")
    try:
        correlation = _correlations(texts.url, project, texts.fp, scores_fingerprint(store, project),
                                    texts.settings_key, tuple(chosen), texts.ref_choice, texts.ref_fp, texts.ref_bytes,
                                    project_tokenize(store, project))
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    if correlation is not None:
        _correlation_table(correlation, human)
    return correlation


def _import_scores(store, project: str, systems: list[str], names: list[str]) -> list[str]:
    """The import of a human scores file (a lead's); the score names stored afterwards."""
    with st.expander("Import human scores", expanded=not names):
        st.markdown(
            "A CSV (or `.tsv`) with a header: a `system` column and either `item` (the item key) or `line` (the "
            "caption's 0-based line in the system's file), then one column per score — or `name` and `value` columns. "
            "Or a plain file with one number per line for one system's captions. The import is all-or-nothing.")
        up = st.file_uploader("Scores file", type=["csv", "tsv", "txt"], key="div_upload")
        c1, c2 = st.columns(2)
        lines_system = c1.selectbox("One score per line for system", ["(CSV with key columns)", *systems],
                                    key="div_lines_system")
        lines_name = c2.text_input("Score name (one-per-line files)", value="human", key="div_lines_name")
        replace_old = st.checkbox("Replace stored scores with the same names", key="div_replace")
        if st.button("Import", disabled=up is None, key="div_import"):
            from ...io.human_scores import import_human_scores
            try:
                per_line = lines_system != "(CSV with key columns)"
                summary = import_human_scores(store, project, up.getvalue(), source=up.name,
                                              system=lines_system if per_line else None,
                                              name=lines_name if per_line else None, replace=replace_old)
                st.success(f"Imported {summary.values} score(s) for {summary.captions} caption(s).")
                names = score_names(store, project)
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))
    return names


def _correlation_table(correlation, human: str) -> None:
    """The correlations with ``human`` in one chosen scope (all captions, system means, within a system)."""
    fmt_cfg = {"format": "%.3f"}
    scopes = correlation.scopes()
    scope = st.radio("Scope", scopes, horizontal=True, key="div_scope",
                     format_func=lambda s: {"overall": "All captions", "system means": "System means"}.get(
                         s, f"Within {ui.md_escape(s)}"))
    table = correlation.table(scope, human)
    table.columns = [f"{a} · {b}" for a, b in table.columns]
    ui.show_table(table, width="stretch",
                 column_config={c: st.column_config.NumberColumn(**fmt_cfg) for c in table.columns})
    sub = correlation.rows[(correlation.rows["scope"] == scope) & (correlation.rows["human"] == human)]
    n_used = int(sub["n"].max()) if len(sub) else 0
    st.caption(
        f"n = {n_used} {'systems' if scope == 'system means' else 'captions'}. Standard: the metric as it is; "
        "M·ld and M·Lg: the metric times its system's ratio or gap. ld and Lg belong to a whole system, so every "
        "caption carries its system's value; within one system they are constant (empty cells) and weighting "
        "changes nothing. Kendall's τ is τ-b. Empty: fewer than three pairs or a constant column.")
    with st.expander("p-values and counts"):
        ui.show_table(sub, hide_index=True, width="stretch")
    for note in correlation.notes:
        st.caption(ui.md_escape(note))


def _export(project: str, report, mu_estimate, rich_sparse, correlation) -> None:
    """Every table computed on the page in one download, and the measures as CSV."""
    st.subheader("Export")
    fmt = st.selectbox("Format", list(FORMATS), key="div_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    tables = report.to_tables()
    for extra in (mu_estimate, rich_sparse, correlation):
        if extra is not None:
            tables.update(extra.to_tables())
    table_download("Download the diversity tables" + (" and correlations" if correlation is not None else ""),
                   tables, fmt, f"{project}-diversity", key="div_download")
    st.download_button("Download the measures as CSV", data=write_table(report.to_frame(), "csv"),
                       file_name=file_name(f"{project}-diversity-measures", "csv"), mime=mime_type("csv"), key="div_csv")
    if math.isnan(report.references.measures.get("hdd", math.nan)) and report.references.measures["tokens"]:
        st.caption("HD-D is empty for corpora with fewer tokens than the sample size.")
