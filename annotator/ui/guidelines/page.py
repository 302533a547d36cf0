"""The guidelines page: task instructions, the error types with definitions and examples, and the contrasts."""

from __future__ import annotations

import streamlit as st

from ...annotation import load_guidelines
from ...taxonomy import taxonomy
from .. import PageContext, md_escape


def render(ctx: PageContext) -> None:
    """Draw the annotation guidelines (the same for every role)."""
    tax = taxonomy()
    guide = load_guidelines()

    st.title("Annotation guidelines")
    tab_instr, tab_types, tab_contrasts = st.tabs(["Instructions", "Error types", "Contrasts"])

    with tab_instr:
        # Our own guideline text (a trusted file in guidelines/), so Markdown is rendered.
        st.markdown(guide.instructions)

    with tab_types:
        st.caption(f"{len(tax.types)} error types in {len(tax.groups)} groups. The key in brackets ticks the type on "
                   f"the annotate page; `{tax.accurate_key}` marks a caption accurate, `{tax.inaccurate_key}` "
                   "inaccurate.")
        for group in tax.groups:
            st.subheader(group, anchor=f"group-{group.lower()}")
            for t in tax.by_group(group):
                with st.container(border=True, key=f"guide_type_{t.id}"):
                    st.markdown(f"**{t.name}** `{t.key}` · id `{t.id}`")
                    st.markdown(t.definition)
                    st.markdown(f"*Example:* \u201c{md_escape(t.example_caption)}\u201d — {md_escape(t.example_note)}.")
                    if len(t.example_types) > 1:
                        st.markdown("*This caption carries:* "
                                    + ", ".join(tax.get(e).name for e in t.example_types) + ".")
                    note = guide.type_notes.get(t.id)
                    if note:
                        st.markdown(note)
                    if not t.correctable:
                        st.caption("Not offered for correction.")

    with tab_contrasts:
        st.caption("Pairs of types that are easy to confuse, and how to decide between them.")
        for c in guide.contrasts:
            with st.container(border=True, key=f"guide_contrast_{c.id}"):
                st.markdown(f"**{c.title}** ({', '.join(tax.get(t).name for t in c.types)})")
                st.markdown(c.rule)
                for ex in c.examples:
                    st.markdown(f"- {ex.text(tax)}")
