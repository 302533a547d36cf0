"""The caption list of the Annotate screen (key l): filters, a page of captions in queue order, a jump by number."""

from __future__ import annotations

import streamlit as st

from ...annotation import CAPTION_FILTERS, Queue
from ...taxonomy import taxonomy
from .. import md_escape
from ..widgets.formatting import show_table
from .callbacks import on_jump
from .state import K_LIST_FILTER, K_LIST_OFFSET, K_POS, LIST_PAGE, queue_size


@st.dialog("Your captions", width="large")
def caption_list(q: Queue) -> None:
    """The caption list: filters, a page of captions in queue order, and a jump by number (Enter)."""
    tax = taxonomy()
    current = st.session_state.get(K_POS)
    with st.form("ann_jump_form", border=False, enter_to_submit=True):
        j1, j2 = st.columns([3, 1], vertical_alignment="bottom")
        number = j1.text_input("Go to caption number (then Enter)", key="ann_jump_number",
                               placeholder=f"1 … {queue_size(q)}")
        go = j2.form_submit_button("Go ⏎", width="stretch")
    if go:
        target = q.position_of((number or "").strip())
        if target is None:
            st.error(f"There is no caption number {md_escape((number or '').strip())} in your queue "
                     f"(1 to {queue_size(q)}).")
        else:
            on_jump(target)
            st.rerun()
    counts = q.listing_counts()
    status = st.radio("Show", list(CAPTION_FILTERS), key=K_LIST_FILTER, horizontal=True,
                      format_func=lambda f: f"{CAPTION_FILTERS[f]} ({counts[f]})")
    total = counts[status]
    offset = st.session_state.get(K_LIST_OFFSET, {}).get(status)
    if offset is None:  # first look at this filter: the page holding the current caption (when listed)
        offset = (current // LIST_PAGE) * LIST_PAGE if status == "all" and current is not None else 0
    offset = max(0, min(offset, max(0, total - 1) // LIST_PAGE * LIST_PAGE))
    entries = q.listing(status, offset=offset, limit=LIST_PAGE)
    if not entries:
        st.caption("No caption matches this filter.")
        return
    rows = [{"No.": e.number, "Item": e.item_key, "Caption": e.caption,
             "Judgement": e.status.capitalize() + (" (now open)" if e.position == current else ""),
             "Error types": ", ".join(tax.get(t).name for t in e.error_types if t in tax.ids), "Note": e.note}
            for e in entries]
    picked = show_table(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                          key="ann_list_table", height=min(38 + 35 * len(rows), 420),
                          column_config={"No.": st.column_config.NumberColumn(width="small"),
                                         "Caption": st.column_config.TextColumn(width="large")})
    chosen = picked.selection.rows if picked and picked.selection else []
    if chosen:
        on_jump(entries[chosen[0]].position)
        st.rerun()
    p1, p2, p3 = st.columns([1, 2, 1], vertical_alignment="center")
    p2.caption(f"{offset + 1}–{offset + len(entries)} of {total}. Click a row to open that caption.")
    pages = st.session_state.setdefault(K_LIST_OFFSET, {})
    if p1.button("← Earlier", key="ann_list_earlier", disabled=offset == 0, width="stretch"):
        pages[status] = max(0, offset - LIST_PAGE)
        st.rerun(scope="fragment")
    if p3.button("Later →", key="ann_list_later", disabled=offset + LIST_PAGE >= total, width="stretch"):
        pages[status] = offset + LIST_PAGE
        st.rerun(scope="fragment")
