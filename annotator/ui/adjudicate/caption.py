"""The caption on the Adjudication page: its words with the decision's spans drawn on them (widgets/spans.js) and
one bar per annotator who marked words under them (marks.js), what those marks say, where the caption comes from,
and who said what."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd
import streamlit as st

from ... import ui
from ...adjudication import span_voters
from ...errors import InputError
from ...taxonomy import taxonomy
from .decision import K_NEWER, K_SPANS, decision_spans, on_keep_mine, on_load_newer

esc = ui.md_escape



def votes_html(table: pd.DataFrame) -> str:
    """The annotators' judgements side by side as an HTML table (every cell escaped; words wrap whole)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>"
                   for r in table.itertuples(index=False))
    return f'<table class="adj-votes" data-testid="adj-votes"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


#: The group colours of the annotators' marks under the words: the spans' tints (annotator.taxonomy.GROUP_COLOURS)
#: made strong enough to read as thin bars.
MARK_COLOURS = ("#d6336c", "#1c6dd0", "#2f9e44", "#c98a00", "#7048e8", "#0c8599")


LONG_CAPTION = 400  # characters: a longer caption scrolls in a pane of its own


MARKS_JS = Path(__file__).with_name("marks.js").read_text(encoding="utf-8")


def marks_json(rows: list[tuple[str, tuple]], tax=None) -> str:
    """The annotators' marks under the caption's words as the page's script (adjudicate/marks.js) reads
    them: ``{"rows": [name, ...], "marks": [[row, start, end, colour, title], ...]}``, one row per annotator of
    ``rows`` ((name, spans) each), each span in the colour of its type's group with the type and fix as its
    title."""
    tax = tax or taxonomy()
    group_of = {t.id: k for k, g in enumerate(tax.groups) for t in tax.by_group(g)}
    marks = [[r, span.start, span.end, MARK_COLOURS[group_of[span.type] % len(MARK_COLOURS)],
              f"{who}: {tax.get(span.type).name}" + (f" → {span.fix}" if span.fix is not None else "")]
             for r, (who, spans) in enumerate(rows) for span in spans if span.type in group_of]
    return json.dumps({"rows": [who for who, _ in rows], "marks": marks}, ensure_ascii=False)


def _span_label(span, who, words, tax) -> str:
    text = " ".join(words[span.start:span.end])
    return (f"{tax.get(span.type).name}: “{text}” (words {span.start}–{span.end - 1})"
            + (f" → {span.fix}" if span.fix is not None else "") + (f" · {', '.join(who)}" if who else ""))


def _mark_rows(case, annotators) -> list[tuple[str, tuple]]:
    """(annotator, spans) of each chosen annotator who marked words on the caption, in the chosen order."""
    by_user = {j.user: j for j in case.annotations}
    return [(a, tuple(by_user[a].spans)) for a in annotators if a in by_user and by_user[a].spans]


def _spans_section(case, annotators) -> None:
    """What the marks under the caption's words say (who marked which words, with their fixes, folded), and the
    decision's spans: drawn over the caption above by widgets/spans.js from the hidden field, pre-filled with
    the union of the annotators' spans per type (annotator.adjudication.suggested_decision), and redrawn by the
    lead as on Annotate."""
    tax = taxonomy()
    words = case.text.split()
    rows = _mark_rows(case, annotators)
    # The decision's spans as JSON (hidden): widgets/spans.js rewrites it and sends each change.
    st.text_input("Error spans of the decision", key=K_SPANS, label_visibility="collapsed")
    try:
        kept = decision_spans()
    except InputError:
        kept = ()
    who = dict(span_voters(case, annotators))
    with st.expander(f"Spans: {len(kept)} in the decision"
                     + "".join(f" · {len(spans)} by {name}" for name, spans in rows)):
        st.html('<ul class="adj-decision-spans" data-testid="adj-decision-spans">'
                + "".join(f"<li>{html.escape(_span_label(s, who.get(s, ()), words, tax))}</li>" for s in kept) + "</ul>"
                if kept else '<p data-testid="adj-decision-spans">The decision marks no words yet.</p>')
        if rows:
            st.html('<table class="adj-spans" data-testid="adj-spans">'
                    + "".join(f"<tr><th>{html.escape(name)}</th><td>"
                              + "<br>".join(html.escape(_span_label(s, (), words, tax)) for s in spans) + "</td></tr>"
                              for name, spans in rows) + "</table>")
        st.caption("The decision's spans are drawn on the caption, starting from the union of the annotators' "
                   "spans per type. Redraw them as on Annotate: select words (drag, click then shift-click, or `,` "
                   "`.` and `<` `>`) and press a type's key to mark them (it ticks the type); the same key on the "
                   "same words, `Backspace`, or a click on a span's key badge removes a span; `/` on a span edits its "
                   "suggested fix. Unticking a type drops its spans.")


def case_view(case, chosen) -> None:
    """The caption (with the decision's spans drawn on it), where it comes from, who said what and where, and
    the decision that counts now or the one saved since the form was filled."""
    rows = _mark_rows(case, chosen)
    long = ' data-long="1"' if len(case.text) > LONG_CAPTION else ""
    # Room under each line for one bar per annotator who marked words.
    spacing = f' style="line-height:calc(1.45em + {5 * len(rows) + 2}px)"' if rows else ""
    # The caption as plain text: the spans script makes its words, the marks script puts the bars under them.
    st.html(f'<div class="adj-caption" data-testid="adj-caption"{long}{spacing} '
            f'data-marks="{html.escape(marks_json(rows), quote=True)}">{html.escape(case.text)}</div>')
    if rows:
        st.caption("Under each word, one bar per annotator who marked words (in the colour of the type's group): "
                   + " · ".join(f"{k + 1}. {esc(name)}" for k, (name, _) in enumerate(rows))
                   + ". Hover a bar for the type and fix.")
    st.text(f"System {case.system}, line {case.line_no}, item {case.item_key}"
            + (" (practice item)" if case.is_practice else ""))
    _spans_section(case, chosen)
    current = case.adjudication
    newer = st.session_state.get(K_NEWER)
    if newer is not None and newer[0] == case.caption_id:
        from ..widgets.newer import newer_notice
        newer_notice(newer[1], what="adjudication", key="adj", on_load=on_load_newer, on_keep=on_keep_mine)
    elif current is not None:
        st.info(f"Adjudicated by {esc(current.user)} (revision {current.revision}); the form shows that decision.")
