"""The correction page: fix one error type at a time, conservatively, and watch the scores move."""

from __future__ import annotations

import streamlit as st

from .. import rescoring, ui
from ..correction import (
    caption_corrections, check_correction, correct_caption, correctable_types, correction_words, diff_html,
    leave_untouched, queue, rule_description, state_version,
)
from ..accounts.access import LEADS
from ..correction.blind import (
    project_blind, project_views_closed, references_shown, set_project_blind, set_project_views_closed, typed_blind,
)
from ..correction.plan import correction_plan
from ..correction.queues import caption_in_context, correction_layers, item_reference_texts
from ..correction.span_rule import pieces, prefill
from ..errors import AnnotatorError, GuardViolation, InputError, NotFound
from ..layers import ADJUDICATED, Layer, available_layers, parse_layer
from ..metric_settings import project_tokenize, tokenize_header
from ..metrics import REGISTRY
from ..store.stamps import CaptionStamp
from ..taxonomy import taxonomy
from .figures import metric_delta

esc = ui.md_escape


SPAN_RULE_TEXT = ("The annotators marked the words of this error (highlighted): change only those, and the articles, "
                  "pronouns and plural endings that agree with them.")


def _show_spans(text: str, spans, etype: str) -> None:
    """The caption with the words marked with ``etype`` highlighted, each suggested fix after an arrow (as text)."""
    import html
    group = taxonomy().get(etype).group
    parts = []
    for words, span in pieces(text, spans):
        if span is None:
            parts.append(html.escape(words))
            continue
        fix = f" <span class='span-fix'>→ {html.escape(span.fix)}</span>" if span.fix is not None else ""
        parts.append(f"<mark class='span-mark span-{html.escape(group.lower())}'>{html.escape(words)}</mark>{fix}")
    st.html("<style>.span-mark{background:#fff1b8;border-bottom:2px solid #d48806;padding:0 2px}"
            ".span-fix{color:#145a2c;font-style:italic}</style>"
            f"<div class='correction-spans' style='font-size:1.05rem'>{' '.join(parts)}</div>")


def _layer_title(label: str) -> str:
    layer = parse_layer(label)
    return "Adjudicated judgements" if layer == ADJUDICATED else layer.title


@st.cache_data(show_spinner=False, max_entries=64)
def _queue(url: str, project: str, system: str, etype: str, layer_label: str, user: str, version: tuple) -> list:
    # Cached until a judgement or correction of the project is saved (version moves).
    return queue(ui.get_store(), project, system, etype, layer_label, user=user)


@st.cache_data(show_spinner=False, max_entries=64)
def _plan(url: str, project: str, system: str, version: tuple):
    # The default correction plan of the system, cached until a judgement or correction is saved.
    try:
        return correction_plan(ui.get_store(), project, system=system)
    except AnnotatorError:
        return None  # several annotators and no adjudication: no default layer, no plan


@st.cache_resource(show_spinner="Scoring the system's captions…", max_entries=16)
def _live(url: str, project: str, system: str, etype: str, layer_label: str, metrics: tuple, tokenize: str):
    """One incremental scorer per (project, system, type, layer, metric tokenisation), shared by every session."""
    return rescoring.LiveDelta(ui.get_store(), project, system, etype, layer=layer_label, metrics=metrics,
                               tokenize=tokenize)


def render(ctx: ui.PageContext) -> None:
    """Draw the correction page of the selected project for the user in ``ctx``."""
    project = ui.page_header(ctx)
    store = ctx.store
    systems = ui.project_systems(ctx)
    if not systems:
        st.info(f"Project {esc(repr(project))} has no system captions to correct.")
        st.stop()

    blind = project_blind(store, project)
    if ctx.user.role in LEADS:
        on = st.toggle("Blind correction", value=blind, key=f"correct_blind::{project}",
                       help="Hide the references and the score change until a correction is saved (the study corrected "
                            "without looking at the references). Applies to everyone correcting this project; each "
                            "correction records the mode it was made in.")
        if on != blind:
            set_project_blind(store, project, on, actor_role=ctx.user.role)
            blind = on
        if blind:
            closed = project_views_closed(store, project)
            close = st.toggle("Close references and scores to correctors on Annotate and Rescoring", value=closed,
                              key=f"correct_blind_views::{project}",
                              help="While blind correction is on, analysts see no references on the Annotate page "
                                   "and no scores on the Rescoring page; leads and admins still do.")
            if close != closed:
                set_project_views_closed(store, project, close, actor_role=ctx.user.role)
    elif blind:
        st.caption("Blind correction: the references and the score change show once the caption's correction is saved.")

    types = correctable_types()
    c1, c2, c3 = st.columns(3)
    system = c1.selectbox("System", systems, key="correct_system")
    plan = _plan(store.url, project, system, state_version(store, project))
    type_ids = [t.id for t in types]
    planned = plan.types if plan is not None else ()
    # The plan (the most frequent types, Generally unrelated left out) comes first, its top type preselected.
    type_ids = list(planned) + [t for t in type_ids if t not in planned]
    etype = c2.selectbox("Error type", type_ids, key="correct_type",
                         format_func=lambda t: taxonomy().get(t).name + (" · planned" if t in planned else ""))
    if plan is not None:
        st.caption(esc(plan.describe()))
    choices = correction_layers(store, project, system)
    layer_options = [lay.label for lay in available_layers(choices["annotators"], adjudicated=choices["adjudicated"])]
    if not layer_options:
        st.info("Nobody has judged these captions yet, so there is nothing to correct. Annotate them first.")
        st.stop()
    own_layer = Layer.annotator(ctx.user.name).label
    default_layer = own_layer if own_layer in layer_options else layer_options[0]

    layer_label = c3.selectbox("Judgements from", layer_options, index=layer_options.index(default_layer), key="correct_layer",
                               format_func=_layer_title,
                               help="The queue holds every caption whose judgement in this layer carries the chosen type.")
    words = correction_words()
    limit = None
    rule = words.rule_for(etype)
    if rule is None or rule.kind not in ("class", "pairs"):
        # The cap is an option of the tool, off by default: the study limits what may change, not how many words.
        if st.checkbox("Cap the number of changed words", value=words.max_changed_words is not None, key="correct_cap"):
            limit = int(st.number_input("Most words a correction may change", min_value=0, max_value=30,
                                        value=words.max_changed_words if words.max_changed_words is not None else 3,
                                        step=1, key="correct_limit"))

    etype_info = taxonomy().get(etype)

    try:
        items = _queue(store.url, project, system, etype, layer_label, ctx.user.name, state_version(store, project))
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
        st.stop()

    # ------------------------------------------------------------------ live score change
    # Drawn here, computed at the end of the run so the caption and the edit field show first.
    live_box = st.container()

    def _show_live():
        live, live_note = None, None
        # Metrics that need a warm-up (METEOR's Java processes) start in the background; until they are up,
        # the other metrics are shown.
        warming = [k for k, state in REGISTRY.warm_up(wait=False).items() if state == "warming"]
        metrics = tuple(m for m in REGISTRY.headline_keys(REGISTRY.defaults()) if REGISTRY.metric_of_score(m) not in warming)
        try:
            live = _live(store.url, project, system, etype, layer_label, metrics, project_tokenize(store, project))
            # Picks up saves (this session's and others') by rescoring only the changed captions.
            live.sync(store)
        except AnnotatorError as exc:
            live_note = str(exc)
        st.subheader(f"Score change from {etype_info.name.lower()} corrections")
        if live is None:
            st.info(f"Scores are not available: {esc(live_note)}")
            return
        d = live.delta()
        cols = st.columns(len(d.metrics) + 1)
        for col, m in zip(cols, d.metrics):
            col.metric(REGISTRY.score_labels().get(m, m), f"{100 * d.scores[m]:.2f}", **metric_delta(100 * d.delta[m]),
                       help="×100; the change is against the captions as generated")
        cols[-1].metric("Captions changed", d.changed)
        st.caption("Metric input: " + tokenize_header(d.tokenize))
        if d.unavailable:
            st.caption(esc(d.unavailable))
        elif warming:
            names = " and ".join(REGISTRY.label(k) for k in warming)
            st.caption(f"{names} {'is' if len(warming) == 1 else 'are'} starting (the first start takes a while). "
                       "The figures follow on a later update.")

    if not items:
        if not blind:
            with live_box:
                _show_live()
        st.info(f"No caption of {esc(repr(system))} carries {etype_info.name!r} in the chosen judgements.")
        st.stop()

    # ------------------------------------------------------------------ queue position
    pos_key = f"correct_pos::{project}::{system}::{etype}::{layer_label}"
    flash_key = "correct_flash"
    if st.session_state.get(pos_key, 0) >= len(items):
        st.session_state[pos_key] = 0
    done = sum(1 for it in items if it.correction is not None)
    st.progress(done / len(items), text=f"{done} of {len(items)} captions decided")

    def _status(it) -> str:
        c = it.correction
        if c is None:
            return "open"
        return "left untouched" if c.corrected_text is None else "corrected"

    def _go(delta: int):
        st.session_state[pos_key] = (st.session_state.get(pos_key, 0) + delta) % len(items)

    def _next_open():
        start = st.session_state.get(pos_key, 0)
        for k in range(1, len(items) + 1):
            j = (start + k) % len(items)
            if items[j].correction is None:
                st.session_state[pos_key] = j
                return
        st.session_state[pos_key] = (start + 1) % len(items)

    n1, n2, n3 = st.columns([1, 1, 4])
    n1.button("◀ Previous", on_click=_go, args=(-1,), key="correct_prev", width="stretch")
    n2.button("Next ▶", on_click=_go, args=(1,), key="correct_next", width="stretch")
    n3.selectbox("Caption", list(range(len(items))), key=pos_key, label_visibility="collapsed",
                 format_func=lambda k: (f"{k + 1}/{len(items)} · line {items[k].line_no} · {items[k].item_key} · "
                                        f"{_status(items[k])}"))
    it = items[st.session_state[pos_key]]
    cid = it.caption_id
    # The caption as shown: the save callbacks (run at the start of the next run, with this run's values) carry it.
    shown_stamp = CaptionStamp.of(cid, project, system, it.item_key, it.line_no, it.text)
    try:
        cctx = caption_in_context(store, cid)
    except NotFound:
        cctx = None
    requeued = st.session_state.pop("correct_requeued", False)
    if not requeued and (cctx is None or shown_stamp != CaptionStamp.of(
            cid, project, cctx["system"], cctx["item_key"], cctx["line_no"], cctx["text"])):
        # The cached queue is older than the captions (a restore or a new import with the same number of saves):
        # read it again, once, so the page shows and stamps the captions as they are.
        st.session_state["correct_requeued"] = True
        _queue.clear()
        st.rerun()
    if cctx is None:
        st.error(f"Caption {cid} is no longer in the store (restored or imported again). Reload the page.")
        st.stop()

    flash = st.session_state.pop(flash_key, None)
    if flash:
        (st.success if flash[0] == "ok" else st.error)(esc(flash[1]))

    # ------------------------------------------------------------------ the caption
    left, right = st.columns([1, 1])
    with left:
        # The boxes' labels as readable text over the picture, as on Annotate (the references stay hidden here
        # until the correction is saved).
        from .figure import caption_figure
        caption_figure(store, int(cid), references=False)
    with right:
        st.markdown("**Generated caption**")
        st.text(it.text)
        if it.spans:
            _show_spans(it.text, it.spans, etype)
        st.markdown(f"**{etype_info.name}**")
        st.text(etype_info.definition)
        st.text(f"Example: “{etype_info.example_caption}” — {etype_info.example_note}")
        others = [taxonomy().get(t).name for t in it.error_types if t != etype]
        st.text("Also annotated: " + (", ".join(others) if others else "nothing else"))
        st.info(SPAN_RULE_TEXT if it.spans else rule_description(etype, words, limit))
        # Blind mode: references (and the score change below) only once this caption's correction is saved.
        revealed = references_shown(blind, it.correction is not None)
        if revealed:
            with st.expander("Reference descriptions"):
                for ref in item_reference_texts(store, cctx["item_id"]):
                    st.text(ref)
        else:
            st.caption("References and the score change are hidden until this caption's correction is saved "
                       "(blind correction).")

    text_key = f"correct_text::{cid}::{etype}"
    reason_key = f"correct_reason::{cid}::{etype}"
    if text_key not in st.session_state:
        existing = it.correction
        # A new correction starts from the suggested fixes of the marked words (the caption itself without any).
        st.session_state[text_key] = (existing.corrected_text if existing and existing.corrected_text is not None
                                      else prefill(it.text, it.spans))
    st.text_area("Corrected caption", key=text_key, height=80,
                 help="Change only the words of this error type. Case is ignored when comparing; the text is saved as written.")
    edited = st.session_state[text_key]
    st.markdown("**Word changes**")
    st.html("<style>.correction-diff del{background:#fde2e1;color:#8a1c1c}"
            ".correction-diff ins{background:#dcf5e3;color:#145a2c;text-decoration:none}</style>"
            f"<div class='correction-diff' style='font-size:1.05rem'>{diff_html(it.text, edited)}</div>")
    report = None
    if edited.strip() and edited.strip() != it.text:
        report = check_correction(etype, it.text, edited, max_changed_words=limit, spans=it.spans)
        if report.ok:
            st.caption(f"Allowed ({report.changed_words} word{'s' if report.changed_words != 1 else ''} changed).")
        else:
            st.warning("This correction breaks the conservative rule:\n\n" + "\n".join(f"- {esc(v)}" for v in report.violations))
            st.text_input("Reason for overriding the rule (kept with the correction and shown in exports)", key=reason_key)

    def _after_save(saved, what: str):
        st.session_state[flash_key] = ("ok", what)
        _next_open()

    @ui.signed_in
    def _save():
        try:
            saved = correct_caption(store, cid, etype, ctx.user.name, st.session_state.get(text_key, ""),
                                    override_reason=st.session_state.get(reason_key), max_changed_words=limit,
                                    create_role=ctx.user.role, stamp=shown_stamp,
                                    blind=typed_blind(blind, revealed), spans=it.spans)
        except GuardViolation as exc:
            st.session_state[flash_key] = ("error", f"Not saved: {exc}")
            return
        except AnnotatorError as exc:
            st.session_state[flash_key] = ("error", f"Not saved: {exc}")
            return
        what = (f"Line {it.line_no}: " + ("no change, recorded as left untouched" if saved.corrected_text is None
                                              else f"correction saved (revision {saved.revision})")
                + (" — rule overridden" if saved.override_reason else ""))
        _after_save(saved, what)

    @ui.signed_in
    def _untouched():
        try:
            saved = leave_untouched(store, cid, etype, ctx.user.name, create_role=ctx.user.role, stamp=shown_stamp,
                                    blind=typed_blind(blind, revealed))
        except AnnotatorError as exc:
            st.session_state[flash_key] = ("error", f"Not saved: {exc}")
            return
        st.session_state.pop(text_key, None)
        _after_save(saved, f"Line {it.line_no}: left untouched (revision {saved.revision})")

    b1, b2, b3 = st.columns([1, 1, 2])
    b1.button("Save correction", type="primary", on_click=_save, key="correct_save", width="stretch")
    b2.button("Leave untouched", on_click=_untouched, key="correct_untouched", width="stretch",
              help="Records the decision that this caption cannot be fixed conservatively.")

    hist = caption_corrections(store, cid, etype)
    if hist:
        with st.expander(f"History of this caption's {etype_info.name.lower()} corrections ({len(hist)})"):
            for h in hist:
                when = h.created_at.strftime("%Y-%m-%d %H:%M") if h.created_at else ""
                st.text(f"rev {h.revision} · {h.user} · {when}: " + ("left untouched" if h.untouched else h.corrected_text)
                        + (f"  [override: {h.override_reason}]" if h.override_reason else ""))

    if revealed:
        with live_box:
            _show_live()
