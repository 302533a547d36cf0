"""The annotate screen's page: :func:`render` (pages/annotate.py calls it) and what it draws; its session state is
state.py, its callbacks callbacks.py and resend.py, the panel form form.py, the caption list caption_list.py.

The task panel (choice, type ticks, note and its buttons) is a form: what the
annotator chooses, ticks and writes stays in the browser, with no server run
per key, and each button of the form (Save & next, Skip, ← / →, Save draft)
sends the whole judgement in one message. Save draft stores the panel as the
user's draft of the caption in the database (annotator.annotation.Queue.save_draft);
showing a caption again brings a draft newer than its judgement back. Each button is a callback, so it
runs *before* the script renders: "Save & next" hands the judgement to the
core (annotation rules, then one committed transaction), finds the next
caption and loads it into the widgets, and the same run then shows it. The
widgets have fixed keys (``ann_*``) so the keyboard script can find them by
their ``st-key-ann_*`` CSS class; annotate/panel.js shows at once what a
click implies (a tick chooses Inaccurate, Accurate clears the ticks). annotate/next.js shows the next
caption's words at once on Save & next (from the state marker, :func:`resend.state_html`) with the panel inert until
the marker names the save stored, and keeps an unconfirmed save in the browser: a page that finds one sends it
again through the hidden ``ann_resend`` field (:func:`resend.on_resend`), stored once.

Generated captions and references are untrusted text: they are HTML-escaped
before they are put into markup, never rendered as Markdown.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ...annotation import STAGE_COARSE, STAGE_FINE, Queue, Task, keyboard_map, labels_as_text, pictures_sent, prefetch, task_image
from ...correction.blind import views_closed_for
from ...errors import AnnotatorError, StoreUnavailable
from ...model import Label, Role
from ...taxonomy import taxonomy
from .. import PageContext, md_escape, outage_notice, progress
from ..widgets import spans as annotate_spans
from ..widgets.figure import references_block
from ..widgets.figure_html import box_overlay_html, figure_ratio_html
from ..widgets.keys import keyboard_script
from .callbacks import on_assign_to_me, on_goto_todo, on_move, on_newer, on_open_list
from .caption_list import caption_list
from .form import hints_for, render_message, render_panel
from .html import LABEL_TEXT, STYLE, _guide_html, caption_html, history_html, view_toggles_html
from .resend import on_resend, state_html
from .state import (
    K_ERR, K_LIST_OPEN, K_LOAD, K_NEWER, K_POS, K_PREFETCHED, K_RESEND, K_SIZE, K_SPANS_START, K_TASK,
    PREFETCH_DELAY, load_caption, queue, queue_size, type_key,
)


#: Hover links between mentions and boxes (a static script; see widgets/box_links.js).
_BOX_LINKS_JS = (Path(__file__).parents[1] / "widgets" / "box_links.js").read_text(encoding="utf-8")
#: What a click in the panel implies on screen, and the "Generally unrelated" reminder (panel.js).
_PANEL_JS = Path(__file__).with_name("panel.js").read_text(encoding="utf-8")
#: Save & next shown at once and kept until stored (next.js).
_NEXT_JS = Path(__file__).with_name("next.js").read_text(encoding="utf-8")


def _keyboard_script() -> str:
    """The page's key handler (annotator.ui.widgets.keys) on the ``ann_*`` widgets."""
    tax = taxonomy()
    return keyboard_script(prefix="ann", caption_testid="ann-caption", keys=keyboard_map(tax),
                           labels=[Label.ACCURATE.value, Label.INACCURATE.value],
                           types={t.id: type_key(t.id) for t in tax.types}, state_name="__annotatorKeyState")


# --------------------------------------------------------------------------- page

def render(ctx: PageContext) -> None:
    """Draw the annotate page for ``ctx.user`` in ``ctx.project``."""
    if ctx.user.role is Role.ANNOTATOR:
        # An annotator's sidebar starts folded here (its only other page is the guidelines): the panel
        # needs the whole width of a laptop's window.
        st.set_page_config(initial_sidebar_state="collapsed")
    st.html(STYLE)
    if not ctx.project:
        st.info("There is no project yet. An admin imports one on the Data page or with `annotator import`.")
        return
    try:
        q = queue(ctx)
        if queue_size(q) == 0:
            st.session_state.pop(K_SIZE, None)  # look again on the next run: work may be assigned any time
            _render_nothing_assigned(ctx)
            return
        if K_POS not in st.session_state:
            load_caption(q, q.first_todo())
    except StoreUnavailable as exc:
        outage_notice(exc)
        return
    except AnnotatorError as exc:
        st.error(md_escape(str(exc)))
        return
    task: Task | None = st.session_state.get(K_TASK)
    prog = progress(ctx.store, ctx.user, ctx.project)

    head, bar = st.columns([3, 2], vertical_alignment="center")
    with head:
        st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    with bar:
        if prog is not None:
            st.progress(prog.fraction, text=f"{prog.done} of {prog.assigned} judged"
                        + (f" · {prog.fine_waiting} waiting for the fine pass" if prog.fine_waiting else ""))

    if task is None:
        _render_all_done(q)
    else:
        _render_task(ctx, q, task)
    st.html(_keyboard_script() + "<script>\n" + _BOX_LINKS_JS + "</script><script>\n" + _PANEL_JS + "</script>"
            + "<script>\n" + _NEXT_JS + "</script>" + annotate_spans.script() + annotate_spans.STYLE,
            unsafe_allow_javascript=True)
    # A save the browser kept while unconfirmed comes back here (hidden; next.js fills it).
    with st.container(key="ann_resend_box"):
        st.text_input("Save sent again", key=K_RESEND, on_change=on_resend, args=(ctx,),
                      label_visibility="collapsed")
    if st.session_state.pop(K_LIST_OPEN, False):
        caption_list(q)
    # Drawn last, once the caption and its panel are: the caption after this one, for Save & next to show at once.
    st.html(state_html(ctx, q, task))
    if task is None:
        return
    if st.session_state.get(K_PREFETCHED) != (q.user, q.project, task.position):
        # While the annotator reads this caption, prepare the images of the next ones.
        st.session_state[K_PREFETCHED] = (q.user, q.project, task.position)
        prefetch(q, task.position, delay=PREFETCH_DELAY)


def _render_nothing_assigned(ctx: PageContext) -> None:
    from ...store.assignments import count_project_assignments
    from ...store.projects import project_id
    with ctx.store.read() as conn:
        assigned_at_all = count_project_assignments(conn, project_id(conn, ctx.project)) > 0
    st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    if st.session_state.get(K_ERR):
        st.error(md_escape(st.session_state[K_ERR]))
    if ctx.user.role in (Role.LEAD, Role.ADMIN) and not assigned_at_all:
        st.info("Nothing in this project is assigned yet. Split it across annotators on the Assignment page, "
                "or judge every caption yourself.")
        st.button("Assign every caption to me", key="ann_assign_me", on_click=on_assign_to_me, args=(ctx,),
                  type="primary")
    else:
        st.info("Nothing is assigned to you in this project. Ask your lead to assign you some captions, "
                "or pick another project in the sidebar.")


def _render_all_done(q: Queue) -> None:
    st.success("Every caption in your queue is judged. Thank you! You can still go back and revise.")
    render_message()  # what the last save did (a revision saved on the way back here, say)
    c1, c2, c3, c4, _ = st.columns([1, 1, 1.2, 1.3, 2])
    c1.button("← Last", key="ann_prev", on_click=on_move, args=(-1,), width="stretch")
    c2.button("First →", key="ann_next", on_click=on_move, args=(1,), width="stretch")
    c3.button("Captions `l`", key="ann_list", on_click=on_open_list, width="stretch")
    c4.button("Check for new work", key="ann_todo", on_click=on_goto_todo, width="stretch")
    st.html('<span data-judge-done="ann" hidden></span>')


def _render_task(ctx: PageContext, q: Queue, task: Task) -> None:
    """One caption: the picture and references on the left; the caption, the panel and the history on the right (in a
    keyed container, which the style sheet finds the two columns by)."""
    with st.container(key="ann_columns"):
        left, right = st.columns([11, 16], gap="medium")
    with left:
        _render_figure(ctx, task)
    with right:
        hints = _render_caption_head(q, task)
        render_panel(ctx, task, hints)
        _render_history(q, task)


def _render_figure(ctx: PageContext, task: Task) -> None:
    """The picture (with its boxes), the item's line, the references and the guide's overlay."""
    item = task.item
    # Boxes and references are shown or hidden in the browser (panel.js, keys h and t), and
    # the choice holds from caption to caption without asking the server. Where the item's size is
    # known the boxes are outlines and labels over one plain picture; otherwise both renders are sent.
    st.html(view_toggles_html())
    note = None
    with st.container(key="ann_figure"):
        st.html(figure_ratio_html(item))
        for show_boxes in pictures_sent(task):
            with st.container(key="ann_img_boxes" if show_boxes else "ann_img_plain"):
                jpeg, note = task_image(task, show_boxes)
                st.image(jpeg, width="stretch", output_format="JPEG")
        if labels_as_text(task):
            st.html(box_overlay_html(item))
    st.caption(f"Item **{md_escape(item.key)}** · {len(item.boxes)} boxes")
    if note:
        st.caption(f":orange[{md_escape(note)}]")
    if views_closed_for(ctx.store, ctx.project, ctx.user.role):
        with st.container(key="ann_refs"):
            st.caption("References are closed to correctors while this project's blind correction round is open.")
    else:
        references_block(item)
    st.html(_guide_html())


def _render_caption_head(q: Queue, task: Task) -> dict[str, tuple[str, ...]]:
    """Where the caption is in the queue (and its stage), the list button, the hints toggle, the caption, the
    earlier judgement and a newer one saved elsewhere; returns the detector hints to show in the panel."""
    tax = taxonomy()
    meta = [f"Caption {task.position + 1} of {queue_size(q)}"]
    if task.item.is_practice:
        meta.append(":orange-badge[Practice item]")
    if task.stage == STAGE_COARSE:
        meta.append(":violet-badge[Second annotation: accurate / inaccurate only]")
    elif task.stage == STAGE_FINE:
        meta.append(":violet-badge[Fine pass: which errors?]")
    m1, m3, m2 = st.columns([3, 1.9, 1.4], vertical_alignment="center")
    m1.markdown(" · ".join(meta))
    m2.button("Captions `l`", key="ann_list", on_click=on_open_list, width="stretch")
    hints = hints_for(q, task, m3) if task.stage != STAGE_COARSE else {}
    # The showing's number and starting spans: the browser puts them in the spans field when they change.
    st.html(caption_html(task.caption.text, st.session_state.get(K_LOAD, 0),
                         st.session_state.get(K_SPANS_START), spans=task.stage != STAGE_COARSE))
    if task.current is not None:
        cur = task.current
        what = LABEL_TEXT.get(cur.label.value, "?") if cur.label is not None else "skipped"
        names = ", ".join(tax.get(t).name for t in cur.error_types if t in tax.ids)
        st.caption(f"You judged this caption before ({what}{': ' + names if names else ''}, revision "
                   f"{cur.revision}). Saving again keeps the earlier version in the history.")
    newer = st.session_state.get(K_NEWER)
    if newer is not None and newer[0] == task.caption_id:
        from ..widgets.newer import newer_notice
        newer_notice(newer[1], what="judgement", key="ann", on_load=on_newer, on_keep=on_newer)
    return hints


def _render_history(q: Queue, task: Task) -> None:
    """The user's earlier revisions of this caption (when there are any)."""
    if task.current is None:
        return
    with st.expander("History of your judgement of this caption"):
        try:
            revisions = q.history(task.caption_id)
        except StoreUnavailable:
            st.caption("The history cannot be read while the database is not answering.")
        else:
            st.html(history_html(revisions, taxonomy()))
