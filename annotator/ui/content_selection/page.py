"""The content selection page: which boxes do descriptions mention, and how close do baselines and systems come?"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ..widgets.palette import DASHED, SOLID, category_colour, series_colours, whole_legend
from ..widgets.formatting import number
from ...content_selection import (
    BASELINES, DEFAULT_KS, evaluate_project, explain_image, held_out_priors, learn_priors, mention_counts, needs_priors,
    scope_lines,
)
from ...content_selection.data import centre_distance, image_centre
from ...correspondence import format_markup
from ...errors import AnnotatorError
from ...io.tables import write_table
from ...store.content_selection import project_fingerprint
from ...store.projects import load_project, project_names

esc = ui.md_escape

_EMPTY = {"count": "counted in M, as equations 1 and 2 are written", "drop": "left out of M"}
_SINGLE = {"score": "scored as equation 1 is written (the upper bound skips them)",
           "skip": "left out of every row, so every row has the same images"}


@st.cache_resource(show_spinner="Loading the project…", max_entries=4)
def _project(url: str, name: str, fingerprint: tuple):
    return load_project(ui.get_store(), name)  # the store of ``url``, the configured database


@st.cache_data(show_spinner="Scoring baselines…", max_entries=16)
def _report(url: str, name: str, fp: tuple, train: str | None, train_fp: tuple | None, baselines: tuple, ks: tuple,
            systems: tuple, runs: int, seed: int, empty: str, upper: bool, single: str):
    project = _project(url, name, fp)
    train_project = _project(url, train, train_fp) if train else None
    return evaluate_project(project, train_project=train_project, baselines=baselines, ks=ks, systems=systems,
                            runs=runs, seed=seed, per_image=True, empty_descriptions=empty, upper_bound=upper,
                            single_descriptions=single)


@st.cache_resource(max_entries=8)
def _corpus_priors(url: str, name: str, fp: tuple):
    """Priors of the training project, or of the whole project (an image's own counts are taken out per image)."""
    return learn_priors(_project(url, name, fp).items)


def _image_list(ctx: ui.PageContext, report) -> None:
    """The scored images with their mention statistics and the skipped ones with the reason, downloadable."""
    images_df = pd.DataFrame([{**r, "scored": "yes"} for r in report.stats.rows()]
                             + [{"key": k, "scored": f"no: {why}"} for k, why in report.skipped.items()],
                             columns=["key", "scored", "boxes", "descriptions", "descriptions_without_mentions",
                                      "instances_per_description", "boxes_mentioned"])
    with st.expander(f"Images: {report.meta['images']} scored, {report.meta['skipped_images']} skipped"):
        ui.show_table(images_df, hide_index=True, width="stretch")
        st.download_button("Download the image list (CSV)", images_df.to_csv(index=False).encode("utf-8"),
                           file_name=f"content_selection_images_{ctx.project}.csv", mime="text/csv")


def _settings(ctx: ui.PageContext, project):
    """The Settings expander: priors, empty and single descriptions, upper bound, baselines, k, systems, random
    orders. Returns (train_name, empty, upper, single, baselines, (k_lo, k_hi), systems, runs, seed)."""
    with st.expander("Settings", expanded=False):
        others = [p for p in project_names(ctx.store) if p != ctx.project]
        source = st.radio("Priors of the unigram and bigram baselines", ["this project, leaving each image out",
                                                                         "another project"],
                          horizontal=True, disabled=not others, key="cs_source",
                          help="Leaving each image out, an image is ranked with the counts of the project's other images. "
                               "Everything else needs no priors and is scored on every image either way.")
        train_name = None
        if source == "another project" and others:
            train_name = st.selectbox("Training project", others, key="cs_train")
        empty = st.radio("Descriptions that mention no box are", list(_EMPTY), format_func=_EMPTY.get, horizontal=True,
                         key="cs_empty")
        upper = st.checkbox("Upper bound (one description against the others: over images with two or more)",
                            value=True, key="cs_upper")
        single = st.radio("Images with a single gold description are", list(_SINGLE), format_func=_SINGLE.get,
                          horizontal=True, key="cs_single", disabled=not upper)
        chosen_baselines = st.multiselect("Baselines", list(BASELINES), default=list(BASELINES), key="cs_baselines")
        k_lo, k_hi = st.slider("k (largest number of boxes a baseline may select)", 1, 30, (1, 15), key="cs_k")
        chosen_systems = st.multiselect("Systems (captions with box correspondences)", project.systems,
                                        default=project.systems, key="cs_systems")
        c1, c2 = st.columns(2)
        runs = int(c1.number_input("Random orders per image", min_value=1, max_value=50, value=5, key="cs_runs"))
        seed = int(c2.number_input("Random seed", min_value=0, value=0, step=1, key="cs_seed"))

    return train_name, empty, upper, single, chosen_baselines, (k_lo, k_hi), chosen_systems, runs, seed


def _summary(report) -> None:
    """What was scored: skipped and unmarked systems, the scope, and the corpus figures."""
    meta = report.meta
    for name, reason in meta.get("systems_skipped", {}).items():
        st.warning(f"System {ui.md_escape(name)} is not scored: {ui.md_escape(reason)}")
    unmarked = meta.get("systems_without_mentions", [])
    if unmarked:
        st.info("No caption of " + ", ".join(ui.md_escape(n) for n in unmarked) + " has box correspondences, so they "
                "select nothing. Captions that carry `[words|box ids]` markup are read with the import option "
                "“captions carry mentions” (`--mentions inline`).")
    st.markdown("\n".join(f"- {ui.md_escape(line)}" for line in scope_lines(report)))
    stats = report.stats.corpus()
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Images scored", f"{meta['images']}")
    m2.metric("Gold descriptions (M)", f"{stats['descriptions']}")
    m3.metric("Unique instances per description", "–" if stats["instances_per_description"] is None else
              f"{stats['instances_per_description']:.2f} ± {stats['instances_per_description_sd']:.2f}")
    m4.metric("Descriptions without a box mention", f"{stats['descriptions_without_mentions']}",
              help=f"They are {_EMPTY[meta['empty_descriptions']]}.")


def _scores_table(ctx: ui.PageContext, report) -> pd.DataFrame:
    """The scores of every baseline, the upper bound and the systems (mean ± sd), with their download; returns
    the rows."""
    rows = pd.DataFrame(report.rows())
    shown = pd.DataFrame({
        "method": rows["method"],
        "k": ["" if pd.isna(k) else str(int(k)) for k in rows["k"]],
        **{m: [f"{v:.2f} ± {sd:.2f}" for v, sd in zip(rows[m], rows[f"{m}_sd"])] for m in ("P", "R", "F")},
        "images": rows["images"],
    })
    st.subheader("Scores")
    ui.show_table(shown, hide_index=True, width="stretch")
    st.download_button("Download the scores (CSV)", write_table(rows, "csv"),
                       file_name=f"content_selection_{ctx.project}.csv", mime="text/csv")
    return rows


def _charts(rows: pd.DataFrame) -> None:
    """F, and precision and recall, against k; the upper bound and the systems as dashed lines. Every series keeps
    one colour on both charts (annotator.ui.widgets.palette), and the legends show each line as it is drawn."""
    base_rows = rows[rows["kind"] == "baseline"]
    if base_rows.empty:
        return
    refs_df = rows[rows["kind"] != "baseline"][["method", "F"]]
    methods = list(dict.fromkeys(base_rows["method"].tolist() + refs_df["method"].tolist()))
    colours = series_colours(methods)
    baselines = list(dict.fromkeys(base_rows["method"]))
    # One legend for every series, each drawn as its line: the baselines solid, the upper bound and systems dashed.
    title = "baseline, upper bound, system"
    legend = whole_legend(symbolType="stroke", symbolSize=300)
    colour = category_colour("method", title, domain=methods, colours=colours, legend=legend)
    dash = alt.StrokeDash("method:N", title=title, legend=legend, scale=alt.Scale(
        domain=methods, range=[SOLID if m in baselines else DASHED for m in methods]))
    f_chart = alt.Chart(base_rows).mark_line(point=True).encode(
        x=alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("F:Q", title="F", scale=alt.Scale(domain=[0, 1])),
        color=colour, strokeDash=dash, tooltip=["method", "k", alt.Tooltip("F:Q", format=".3f")])
    rules = alt.Chart(refs_df).mark_rule(strokeWidth=2).encode(
        y="F:Q", color=colour, strokeDash=dash, tooltip=["method", alt.Tooltip("F:Q", format=".3f")])
    st.subheader("F against k")
    st.caption("Dashed lines: the upper bound and the systems, which do not depend on k.")
    st.altair_chart(f_chart + rules, width="stretch")

    pr = base_rows.melt(id_vars=["method", "k"], value_vars=["P", "R"], var_name="measure", value_name="score")
    pr_chart = alt.Chart(pr).mark_line(point=True).encode(
        x=alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("score:Q", title="score", scale=alt.Scale(domain=[0, 1])),
        color=category_colour("method", "baseline", domain=baselines, colours=colours,
                              legend=whole_legend(symbolType="stroke", symbolSize=300)),
        strokeDash=alt.StrokeDash("measure:N", title="measure", scale=alt.Scale(domain=["P", "R"],
                                                                                 range=[SOLID, DASHED]),
                                  legend=whole_legend(symbolType="stroke", symbolSize=300,
                                                      labelExpr="datum.label == 'P' ? 'P (precision)' : 'R (recall)'")),
        tooltip=["method", "k", "measure", alt.Tooltip("score:Q", format=".3f")])
    st.subheader("Precision and recall against k")
    st.caption("Solid: precision; dashed: recall.")
    st.altair_chart(pr_chart, width="stretch")


def _one_image(ctx: ui.PageContext, project, report, fp, train_name, train_fp, seed: int) -> None:
    """One image: what a chosen baseline or system selects on it, its scores, boxes and references."""
    url = ctx.store.url
    meta = report.meta
    st.subheader("One image")
    methods = list(report.baselines) + [f"system:{s}" for s in report.systems]
    if not methods:
        st.info("Choose at least one baseline or system to see what it selects.")
        st.stop()
    c1, c2 = st.columns([2, 1])
    method = c1.selectbox("Baseline or system", methods, key="cs_method",
                          format_func=lambda m: f"system {m.split(':', 1)[1]}" if m.startswith("system:") else m)
    k_img = int(c2.number_input("k", min_value=1, max_value=30, value=3, key="cs_k_image",
                                disabled=method.startswith("system:")))

    per = report.per_image[method]
    if per.ndim == 3:
        col = list(report.ks).index(k_img) if k_img in report.ks else None
        f_img = per[:, col, 2] if col is not None else None
    else:
        f_img = per[:, 2]
    order = sorted(range(len(report.keys)), key=lambda j: (f_img[j] if f_img is not None else 0.0, report.keys[j]))
    labels = {report.keys[j]: (f"{report.keys[j]}  (F = {f_img[j]:.2f})" if f_img is not None else report.keys[j]) for j in order}
    key = st.selectbox("Image (lowest F first)", [report.keys[j] for j in order], format_func=labels.get, key="cs_image")
    item = next(it for it in project.items if it.key == key)

    try:
        priors = None
        if needs_priors(method):
            priors = _corpus_priors(url, train_name, train_fp) if train_name else \
                held_out_priors(_corpus_priors(url, ctx.project, fp), item)
        choice = explain_image(item, method, None if method.startswith("system:") else k_img, priors=priors, seed=seed,
                               empty_descriptions=meta["empty_descriptions"])
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
        st.stop()
    _image_detail(project, report, item, choice, method)


def _image_detail(project, report, item, choice, method: str) -> None:
    """The image with the selected boxes drawn strong, the selection's scores, and the image's boxes and
    references."""
    meta = report.meta
    left, right = st.columns([3, 2])
    with left:
        try:
            from ...images import render_item_png
            st.image(render_item_png(project.image_root, item, highlight=set(choice.selected),
                                     trusted_root=project.trusted_image_root),
                     caption="Selected boxes are drawn strong, the others faint.")
        except AnnotatorError as exc:
            st.warning(f"The image cannot be shown: {esc(str(exc))}")
    with right:
        if choice.scores is None:
            st.info("No reference of this image mentions a box, so it is not scored.")
        else:
            p, r, f = choice.scores
            m1, m2, m3 = st.columns(3)
            m1.metric("P", f"{p:.2f}")
            m2.metric("R", f"{r:.2f}")
            m3.metric("F", f"{f:.2f}")
        st.markdown("**Selected:** " + (", ".join(ui.md_escape(f"{b} ({item.box(b).label})") for b in choice.selected)
                                        or "nothing"))
        if choice.sentence:
            st.markdown("**As a sentence:**" if not method.startswith("system:") else "**Caption:**")
            st.code(choice.sentence, language=None, wrap_lines=True)

    counts = mention_counts(item)
    row = report.keys.index(item.key)
    n_refs = int(report.stats.descriptions[row])
    st.markdown(f"**This image:** {n_refs} gold descriptions in M, "
                f"{report.stats.per_image_mean()[row]:.2f} unique instances mentioned per description; "
                f"{int(report.stats.without_mentions[row])} descriptions mention no box "
                f"({_EMPTY[meta['empty_descriptions']]}).")
    centre = image_centre(item)
    boxes_df = pd.DataFrame([{
        "box": b.box_id, "label": b.label, "area": round(b.area), "distance to centre": round(centre_distance(b, centre), 1),
        "mentioned by": f"{counts[b.box_id]} of {n_refs}", "selected": b.box_id in choice.selected,
    } for b in item.boxes])
    st.markdown("**Boxes** — how many references mention each one")
    ui.show_table(boxes_df, {"distance to centre": lambda v: number(v, 1)}, hide_index=True, width="stretch")

    st.markdown("**References** (mentions as `[words|box ids]`)")
    for ref in item.references:
        try:
            st.code(format_markup(ref.text, ref.mentions), language=None, wrap_lines=True)
        except ValueError:  # overlapping mentions cannot be written inline
            st.code(ref.text, language=None, wrap_lines=True)


def render(ctx: ui.PageContext) -> None:
    """Draw the content selection scores of the selected project for ``ctx``."""
    ui.page_header(ctx)

    url = ctx.store.url
    try:
        fp = project_fingerprint(ctx.store, ctx.project)
        project = _project(url, ctx.project, fp)
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
        st.stop()
    train_name, empty, upper, single, chosen_baselines, (k_lo, k_hi), chosen_systems, runs, seed = \
        _settings(ctx, project)

    ks = tuple(range(k_lo, k_hi + 1)) if (k_lo, k_hi) != (1, 15) else DEFAULT_KS
    train_fp = project_fingerprint(ctx.store, train_name) if train_name else None
    try:
        report = _report(url, ctx.project, fp, train_name, train_fp, tuple(chosen_baselines), ks, tuple(chosen_systems),
                         runs, seed, empty, upper, single)
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
        st.stop()
    _summary(report)
    if report.meta["images"] == 0:
        st.warning("Nothing to score: no image of the project has a box and enough gold descriptions that mention one.")
        _image_list(ctx, report)
        st.stop()
    rows = _scores_table(ctx, report)
    _image_list(ctx, report)
    _charts(rows)
    _one_image(ctx, project, report, fp, train_name, train_fp, seed)
