"""The annotate page's markup: caption, the view switches, the reminder, the type chips, the history table and the
guide overlay (annotator/ui/annotate/page.py draws them); the picture's builders are widgets/figure_html.py.

Generated captions, references and every other user or data string are HTML-escaped before they are
put into markup, never rendered as Markdown. Nothing here imports streamlit: these are plain builders.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

from ...annotation import load_guidelines, unrelated_hint_text
from ...model import Label
from ...taxonomy import taxonomy
from ..widgets.figure_html import FIGURE_CSS
from ..widgets.spans import LONG_CAPTION, SPAN_KEYS_HELP

LABEL_TEXT = {Label.ACCURATE.value: "Accurate", Label.INACCURATE.value: "Inaccurate"}

#: The annotate page's style sheets (widgets/figure.css, annotate.css), read once per process.
STYLE = "<style>\n" + FIGURE_CSS + "\n" + Path(__file__).with_name("annotate.css").read_text(encoding="utf-8") \
    + "</style>"


def caption_html(text: str, load: int | None = None, start: str | None = None, *, spans: bool = True) -> str:
    """The generated caption as escaped markup (shown verbatim, never interpreted); a long one (a model's
    paragraph) is marked so the style sets it smaller. ``load`` numbers the showing of a caption (each time the
    page loads one into the panel) and ``start`` is the spans field's value it starts with: widgets/spans.js
    puts that value back in the field when a new showing comes, so nothing of the caption shown before stays.
    Without ``spans`` (the label-only step of a second pass) the span keys and clicks do nothing on it."""
    long = ' data-long=""' if len(text) > LONG_CAPTION else ""
    shown = "" if load is None else f' data-load="{int(load)}" data-spans="{html.escape(start or "[]")}"'
    shown += "" if spans else ' data-no-spans=""'
    return f'<div class="ann-caption" data-testid="ann-caption"{long}{shown}>{html.escape(text)}</div>'


def history_html(revisions, tax=None) -> str:
    """The revisions of one judgement as a table that wraps instead of cutting text: type names (not
    ids), the judgement in words, the note whole, the time in UTC. All user text escaped."""
    tax = tax or taxonomy()
    e = html.escape
    head = "".join(f"<th scope=\"col\">{h}</th>" for h in
                   ("Revision", "Judgement", "Error types", "Note", "Seconds", "Saved at (UTC)"))
    body = []
    for j in revisions:
        what = LABEL_TEXT.get(j.label.value, j.label.value) if j.label is not None else "Skipped"
        names = ", ".join(tax.get(t).name if t in tax.ids else t for t in j.error_types)
        saved = j.created_at
        if getattr(saved, "tzinfo", None) is not None:
            from datetime import timezone
            saved = saved.astimezone(timezone.utc)
        when = saved.strftime("%Y-%m-%d %H:%M:%S") if hasattr(saved, "strftime") else str(saved)
        body.append(f"<tr><td>{j.revision}</td><td>{e(what)}</td><td>{e(names)}</td><td>{e(j.note or '')}</td>"
                    f"<td>{j.seconds:.1f}</td><td>{e(when)}</td></tr>")
    return (f'<table class="ann-history" data-testid="ann-history"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def view_toggles_html() -> str:
    """The Boxes (h), References (t) and Zoom (m) switches: plain inputs the browser acts on by itself
    (annotate/panel.js), so none of them asks the server. Zoom magnifies the picture 2.5× around the
    pointer (its labels and outlines with it)."""
    return ('<div class="ann-view" role="group" aria-label="Show">'
            '<div class="st-key-ann_show_boxes" data-local-input><label><input type="checkbox" role="switch" checked>'
            '<p>Boxes <code>h</code></p></label></div>'
            '<div class="st-key-ann_show_refs" data-local-input><label><input type="checkbox" role="switch" checked>'
            '<p>References <code>t</code></p></label></div>'
            '<div class="st-key-ann_zoom" data-local-input><label><input type="checkbox" role="switch">'
            '<p>Zoom <code>m</code></p></label></div></div>')


def unrelated_hint_html(tax=None) -> str:
    """The "Generally unrelated" reminder, hidden: annotate/panel.js shows it (with the count) while more
    than ``tax.unrelated_hint_above`` other types are ticked and Generally unrelated is not, and its button
    leaves Generally unrelated as the only tick. The words are the core's (annotation.unrelated_hint_text)."""
    tax = tax or taxonomy()
    text = html.escape(unrelated_hint_text("\x00")).split("\x00")
    return (f'<div class="ann-unrelated" data-testid="ann-unrelated-hint" data-above="{int(tax.unrelated_hint_above)}"'
            f' role="status" hidden><span>{text[0]}<span data-count></span>{text[1]}</span> '
            '<button type="button" data-use-unrelated>Use Generally unrelated</button></div>')


KEYS_HELP = (("y", "accurate"), ("n", "inaccurate"), ("1 … g", "the key on a type's label ticks or unticks it"),
             ("Enter", "save & next"), ("← / →", "previous / next caption"), ("k", "skip (it comes back at the end)"),
             ("h", "boxes on / off"), ("t", "references on / off"), ("m", "zoom the picture in / out"), ("l", "caption list: filter, jump by number"),
             ("/", "write in the note"),
             ("Esc", "leave the note (or close this guide)"), ("Ctrl+Enter", "save from the note"),
             ("?", "this guide")) + SPAN_KEYS_HELP


def guide_overlay_html(tax=None, guide=None) -> str:
    """The guide overlay: every key, every error type with its definition, example and the contrasts it is
    part of, then the contrasts with their worked cases. Hidden until ``?`` or its button opens it; a
    modal dialog with a heading, reachable and closable by keyboard. All text comes from guidelines/ and
    is escaped (it is data, never markup)."""
    tax = tax or taxonomy()
    guide = guide or load_guidelines(tax=tax)
    e = html.escape
    out = ['<button type="button" class="ann-help-open" data-help-open="ann" aria-haspopup="dialog" '
           'aria-controls="ann-help">Types, contrasts and keys <kbd>?</kbd></button>',
           '<div id="ann-help" class="ann-help" role="dialog" aria-modal="true" aria-labelledby="ann-help-title" '
           'tabindex="-1" hidden><div class="ann-help-panel" role="document" tabindex="0">',
           '<div class="ann-help-head"><h2 id="ann-help-title">Error types, contrasts and keys</h2>'
           '<button type="button" data-help-close aria-label="Close the guide">Close <kbd>Esc</kbd></button></div>',
           '<h3>Keys</h3><dl class="ann-help-keys">']
    out += [f"<div><dt><kbd>{e(k)}</kbd></dt><dd>{e(what)}</dd></div>" for k, what in KEYS_HELP]
    out.append("</dl>")
    by_type: dict[str, list] = {}
    for c in guide.contrasts:
        for t in c.types:
            by_type.setdefault(t, []).append(c)
    for group in tax.groups:
        out.append(f"<h3>{e(group)}</h3>")
        for t in tax.by_group(group):
            out.append(f'<section class="ann-help-type" data-type="{e(t.id)}" aria-label="{e(t.name)}">'
                       f"<h4>{e(t.name)} <kbd>{e(t.key)}</kbd></h4><p>{e(t.definition)}</p>"
                       f"<p><em>Example:</em> \u201c{e(t.example_caption)}\u201d — {e(t.example_note)}.</p>")
            for c in by_type.get(t.id, ()):
                out.append(f'<p class="ann-help-contrast"><em>Contrast — {e(c.title)}</em> {e(c.rule)}</p>')
            out.append("</section>")
    out.append("<h3>Contrasts</h3>")
    for c in guide.contrasts:
        out.append(f'<section class="ann-help-contrast-case" aria-label="{e(c.title)}"><h4>{e(c.title)}</h4>'
                   f"<p>{e(c.rule)}</p><ul>" + "".join(f"<li>{e(x.text(tax))}</li>" for x in c.examples)
                   + "</ul></section>")
    out.append("</div></div>")
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _guide_html() -> str:
    # The guidelines are files shipped with the app: built once per process, not on every key.
    return guide_overlay_html()


#: At most this many error types in one column of the panel: a longer group goes on in the next column.
TYPE_ROWS = 4


def type_columns(tax=None, rows: int = TYPE_ROWS) -> list[tuple[str, str, list]]:
    """The panel's columns of error types: (group, heading, types), at most ``rows`` types each; a group
    longer than that continues in the next column under an empty heading, so the grid stays ``rows`` deep."""
    tax = tax or taxonomy()
    out = []
    for group in tax.groups:
        types = list(tax.by_group(group))
        for i in range(0, len(types), rows):
            out.append((group, group if i == 0 else "", types[i:i + rows]))
    return out


def type_chips_html(tax=None, ticked=(), load: int | None = None) -> str:
    """The ticked error types as chips beside Task 1 (one per type, hidden unless ticked; annotate/panel.js
    follows the ticks in the browser), so a tick made by key is seen even before the box is looked for.
    ``load`` (the showing of the caption, as in :func:`caption_html`) makes each showing's markup new, so the
    browser draws it afresh instead of keeping the chips the script showed for the caption before."""
    tax = tax or taxonomy()
    e = html.escape
    ticked = set(ticked)
    chips = "".join(f'<span class="ann-chip" data-chip="{e(t.id)}"{"" if t.id in ticked else " hidden"}>'
                    f"{e(t.name)}</span>" for t in tax.types)
    shown = "" if load is None else f' data-load="{int(load)}"'
    return (f'<div class="ann-chips" data-testid="ann-chips"{shown} aria-label="Ticked error types">'
            f'<span class="ann-chip-none" data-chip-none{" hidden" if ticked else ""}>No error type ticked</span>'
            f"{chips}</div>")
