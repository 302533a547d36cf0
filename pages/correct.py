"""Correction: fix one error type at a time, conservatively, and watch the scores move."""

from __future__ import annotations

import streamlit as st

from annotator import ui

ctx = ui.page_setup("correct")
esc = ui.md_escape

from annotator.correction import (  # noqa: E402
    caption_corrections, check_correction, correct_caption, correctable_types, correction_words,
    diff_html, leave_untouched, queue, rule_description, state_version,
)
from annotator.layers import ADJUDICATED, Layer, available_layers, parse_layer  # noqa: E402
from annotator import rescoring  # noqa: E402
from annotator.errors import AnnotatorError, GuardViolation, InputError  # noqa: E402
from annotator.metrics import REGISTRY  # noqa: E402
from annotator.store.correction_queries import caption_context, layer_choices  # noqa: E402
from annotator.store.projects import project_id  # noqa: E402
from annotator.taxonomy import taxonomy  # noqa: E402

st.title("Correction")
st.caption(
    "Pick an error type and correct only that error in every caption annotated with it, changing as little as "
    "possible. Each correction is stored beside the generated caption (never over it), with its history. If a fix "
    "would mean rewriting the sentence, leave the caption untouched: an underestimate of the gain is better than "
    "an evaluation of how well people write captions.")

project = ui.require_project(ctx, "Import captions and annotate them first.")
store = ctx.store
systems = ui.project_systems(ctx)
if not systems:
    st.info(f"Project {esc(repr(project))} has no system captions to correct.")
    st.stop()

types = correctable_types()
c1, c2, c3 = st.columns(3)
system = c1.selectbox("System", systems, key="correct_system")
etype = c2.selectbox("Error type", [t.id for t in types], key="correct_type",
                     format_func=lambda t: taxonomy().get(t).name)
with store.read() as conn:
    choices = layer_choices(conn, project_id(conn, project), system)
layer_options = [lay.label for lay in available_layers(choices["annotators"], adjudicated=choices["adjudicated"])]
if not layer_options:
    st.info("Nobody has judged these captions yet, so there is nothing to correct. Annotate them first.")
    st.stop()
own_layer = Layer.annotator(ctx.user.name).label
default_layer = own_layer if own_layer in layer_options else layer_options[0]


def _layer_title(label: str) -> str:
    layer = parse_layer(label)
    return "Adjudicated judgements" if layer == ADJUDICATED else layer.title


layer_label = c3.selectbox("Judgements from", layer_options, index=layer_options.index(default_layer), key="correct_layer",
                           format_func=_layer_title,
                           help="The queue holds every caption whose judgement in this layer carries the chosen type.")
words = correction_words()
limit = None
if words.rule_for(etype) is None:
    limit = int(st.number_input("Most words a correction may change", min_value=0, max_value=30,
                                value=words.max_changed_words, step=1, key="correct_limit",
                                help="For this type there is no word list: a correction may change at most this many "
                                     "words and may not move words around."))

etype_info = taxonomy().get(etype)


@st.cache_data(show_spinner=False, max_entries=64)
def _queue(url: str, project: str, system: str, etype: str, layer_label: str, user: str, version: tuple) -> list[dict]:
    # Cached until a judgement or correction of the project is saved (version moves).
    return queue(store, project, system, etype, layer_label, user=user)


try:
    items = _queue(store.url, project, system, etype, layer_label, ctx.user.name, state_version(store, project))
except AnnotatorError as exc:
    st.error(esc(str(exc)))
    st.stop()

# ------------------------------------------------------------------ live score change
# Drawn here, computed at the end of the run so the caption and the edit field show first.
live_box = st.container()


@st.cache_resource(show_spinner="Scoring the system's captions…", max_entries=16)
def _live(url: str, project: str, system: str, etype: str, layer_label: str, metrics: tuple):
    """One incremental scorer per (project, system, type, layer), shared by every session."""
    return rescoring.LiveDelta(ctx.store, project, system, etype, layer=layer_label, metrics=metrics)


def _show_live():
    live, live_note = None, None
    # Metrics that need a warm-up (METEOR's Java processes) start in the background; until they are up,
    # the other metrics are shown.
    warming = [k for k, state in REGISTRY.warm_up(wait=False).items() if state == "warming"]
    metrics = tuple(m for m in REGISTRY.headline_keys() if REGISTRY.metric_of_score(m) not in warming)
    try:
        live = _live(store.url, project, system, etype, layer_label, metrics)
        # Picks up saves (this session's and others') by rescoring only the changed captions.
        live.sync(store)
    except AnnotatorError as exc:
        live_note = str(exc)
    st.subheader(f"Score change from {etype_info.name.lower()} corrections")
    if live is None:
        st.info(f"Scores are not available: {esc(live_note)}")
        return
    d = live.delta()
    cols = st.columns(len(d["metrics"]) + 1)
    for col, m in zip(cols, d["metrics"]):
        col.metric(REGISTRY.score_labels().get(m, m), f"{100 * d['scores'][m]:.2f}", f"{100 * d['delta'][m]:+.2f}",
                   help="×100; the change is against the captions as generated")
    cols[-1].metric("Captions changed", d["changed"])
    if d["unavailable"]:
        st.caption(esc(d["unavailable"]))
    elif warming:
        names = " and ".join(REGISTRY.label(k) for k in warming)
        st.caption(f"{names} {'is' if len(warming) == 1 else 'are'} starting (the first start takes a while). "
                   "The figures follow on a later update.")


if not items:
    with live_box:
        _show_live()
    st.info(f"No caption of {esc(repr(system))} carries {etype_info.name!r} in the chosen judgements.")
    st.stop()

# ------------------------------------------------------------------ queue position
pos_key = f"correct_pos::{project}::{system}::{etype}::{layer_label}"
flash_key = "correct_flash"
if st.session_state.get(pos_key, 0) >= len(items):
    st.session_state[pos_key] = 0
done = sum(1 for it in items if it["correction"] is not None)
st.progress(done / len(items), text=f"{done} of {len(items)} captions decided")


def _status(it) -> str:
    c = it["correction"]
    if c is None:
        return "open"
    return "left untouched" if c["corrected_text"] is None else "corrected"


def _go(delta: int):
    st.session_state[pos_key] = (st.session_state.get(pos_key, 0) + delta) % len(items)


def _next_open():
    start = st.session_state.get(pos_key, 0)
    for k in range(1, len(items) + 1):
        j = (start + k) % len(items)
        if items[j]["correction"] is None:
            st.session_state[pos_key] = j
            return
    st.session_state[pos_key] = (start + 1) % len(items)


n1, n2, n3 = st.columns([1, 1, 4])
n1.button("◀ Previous", on_click=_go, args=(-1,), key="correct_prev", width="stretch")
n2.button("Next ▶", on_click=_go, args=(1,), key="correct_next", width="stretch")
n3.selectbox("Caption", list(range(len(items))), key=pos_key, label_visibility="collapsed",
             format_func=lambda k: f"{k + 1}/{len(items)} · line {items[k]['line_no']} · {items[k]['item_key']} · {_status(items[k])}")
it = items[st.session_state[pos_key]]
cid = it["caption_id"]

flash = st.session_state.pop(flash_key, None)
if flash:
    (st.success if flash[0] == "ok" else st.error)(esc(flash[1]))

# ------------------------------------------------------------------ the caption
left, right = st.columns([1, 1])
with left:
    with store.read() as conn:
        cctx = caption_context(conn, cid)
    try:
        from annotator.images import render_boxes_png
        png = render_boxes_png(cctx["image_root"], cctx["image"], cctx["boxes"], width=cctx["width"], height=cctx["height"],
                               trusted_root=cctx["trusted_image_root"])
        st.image(png, caption=f"{esc(cctx['item_key'])} with its gold boxes", width="stretch")
    except (ImportError, InputError) as exc:
        st.warning(f"The image cannot be shown: {esc(str(exc))}")
with right:
    st.markdown("**Generated caption**")
    st.text(it["text"])
    st.markdown(f"**{etype_info.name}**")
    st.text(etype_info.definition)
    st.text(f"Example: “{etype_info.example_caption}” — {etype_info.example_note}")
    others = [taxonomy().get(t).name for t in it["error_types"] if t != etype]
    st.text("Also annotated: " + (", ".join(others) if others else "nothing else"))
    st.info(rule_description(etype, words, limit))

text_key = f"correct_text::{cid}::{etype}"
reason_key = f"correct_reason::{cid}::{etype}"
if text_key not in st.session_state:
    existing = it["correction"]
    st.session_state[text_key] = existing["corrected_text"] if existing and existing["corrected_text"] is not None else it["text"]
st.text_area("Corrected caption", key=text_key, height=80,
             help="Change only the words of this error type. Case is ignored when comparing; the text is saved as written.")
edited = st.session_state[text_key]
st.markdown("**Word changes**")
st.html("<style>.correction-diff del{background:#fde2e1;color:#8a1c1c}"
        ".correction-diff ins{background:#dcf5e3;color:#145a2c;text-decoration:none}</style>"
        f"<div class='correction-diff' style='font-size:1.05rem'>{diff_html(it['text'], edited)}</div>")
report = None
if edited.strip() and edited.strip() != it["text"]:
    report = check_correction(etype, it["text"], edited, max_changed_words=limit)
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
                                create_role=ctx.user.role)
    except GuardViolation as exc:
        st.session_state[flash_key] = ("error", f"Not saved: {exc}")
        return
    except AnnotatorError as exc:
        st.session_state[flash_key] = ("error", f"Not saved: {exc}")
        return
    what = (f"Line {it['line_no']}: " + ("no change, recorded as left untouched" if saved.corrected_text is None
                                          else f"correction saved (revision {saved.revision})")
            + (" — rule overridden" if saved.override_reason else ""))
    _after_save(saved, what)


@ui.signed_in
def _untouched():
    try:
        saved = leave_untouched(store, cid, etype, ctx.user.name, create_role=ctx.user.role)
    except AnnotatorError as exc:
        st.session_state[flash_key] = ("error", f"Not saved: {exc}")
        return
    st.session_state.pop(text_key, None)
    _after_save(saved, f"Line {it['line_no']}: left untouched (revision {saved.revision})")


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

with live_box:
    _show_live()
