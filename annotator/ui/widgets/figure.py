"""A caption's picture laid out as the annotate page shows it, for the pages where leads and analysts look at
a caption someone judged (Adjudication, Agreement, Error analysis): the plain photo with the gold boxes over it
as HTML (outlines and labels that stay legible at any size), and the item's references with their mentions,
linked to the boxes by hover (box_links.js)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ...annotation import caption_picture
from .text import md_escape
from .figure_html import FIGURE_STYLE, box_overlay_html, figure_ratio_html, reference_html

_BOX_LINKS_JS = Path(__file__).with_name("box_links.js").read_text(encoding="utf-8")


def caption_figure(store, caption_id: int, *, references: bool = True) -> None:
    """Draw caption ``caption_id``'s picture with its boxes (and, with ``references``, the item's references
    with their mentions) as Annotate does. The figure's keys are the annotate page's (``ann_figure``,
    ``ann_refs``), so one page shows one figure."""
    pic = caption_picture(store, int(caption_id))
    item = pic.item
    if pic.note:
        # No photo to show (an item imported without pictures, a file not there): one compact line instead of
        # a grey canvas the size of the picture and a warning, so the caption and references get the room.
        boxes = ", ".join(f"{b.box_id} {b.label}" for b in item.boxes)
        st.caption(f":material/hide_image: Item **{md_escape(item.key)}**: {md_escape(pic.note)}"
                   + (f" · gold boxes: {md_escape(boxes)}" if boxes else ""))
    else:
        st.html(FIGURE_STYLE)
        with st.container(key="ann_figure"):
            st.html(figure_ratio_html(item))
            st.image(pic.jpeg, width="stretch", output_format="JPEG")
            if pic.labels_as_text:
                st.html(box_overlay_html(item))
        st.caption(f"Item **{md_escape(item.key)}** with its gold boxes · {len(item.boxes)} boxes")
    if references:
        references_block(item)
    st.html("<script>\n" + _BOX_LINKS_JS + "</script>", unsafe_allow_javascript=True)


def references_block(item) -> None:
    """The item's references with their mentions coloured as their boxes (container ``ann_refs``, which the
    References switch of Annotate hides and shows)."""
    with st.container(key="ann_refs"):
        if item.references:
            order = [b.box_id for b in item.boxes]
            st.html("".join(reference_html(r.text, r.mentions, order) for r in item.references))
        else:
            st.caption("This item has no references.")
