"""Error spans on the judging pages: the span keys, and the hidden field that carries the spans to the
server. annotator/ui/widgets/spans.js does the rest in the browser: it splits the caption into its
whitespace tokens (the words spans count), selects and marks them.

On Annotate the field (``K_SPANS``) is in the panel form, so no key reaches the server before Save. On
Adjudication the lead redraws the decision's spans with the same words, keys and colours; there the field
(``adj_spans``) is outside a form and each change is sent at once, as a tick there is (:func:`script`'s
``commit``). The field holds the spans as JSON (annotator.spans): the page puts the starting spans there
when it loads a caption, the script rewrites it on every change, and the save reads it back and hands it to
the core, which checks it (annotator.spans.check_spans).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from ...errors import InputError
from ...spans import Span, parse_spans, spans_json
from ...taxonomy import Taxonomy, group_colours, taxonomy
from .keys import FRAMES_JS

K_SPANS = "ann_spans"
#: Captions longer than this (characters) are set smaller, so a model's paragraph fits beside the picture.
LONG_CAPTION = 280
#: The span keys (beside the taxonomy's and the page's); shown in the ? guide.
SPAN_KEYS = {",": "left", ".": "right", "<": "extend-left", ">": "extend-right", "Backspace": "remove",
             "Delete": "remove"}
SPAN_KEYS_HELP = (
    (", / .", "word cursor: previous / next word (selects it)"),
    ("< / >", "extend the selection to the previous / next word (or drag, or click then shift-click)"),
    ("type key", "with words selected: mark them with that type (and tick it); again on the same words: unmark"),
    ("Backspace", "remove the spans on the selected words (or click a span's key badge, or its ✕ in the list)"),
    ("/", "with a marked span selected: edit its suggested fix in the list of spans (otherwise: the note)"),
    ("Esc", "clear the word selection"),
)
_JS = Path(__file__).with_name("spans.js").read_text(encoding="utf-8")
_CONFIG_SLOT = "__ANNOTATOR_SPANS_CONFIG__"

STYLE = """<style>
:is(.ann-caption, .adj-caption) .ann-w { cursor: text; user-select: none; -webkit-user-select: none;
  border-radius: 3px; padding: 0 1px; box-decoration-break: clone; -webkit-box-decoration-break: clone; }
:is(.ann-caption, .adj-caption) .ann-w.ann-sel { outline: 2px solid #1f77b4; outline-offset: 0;
  background-color: rgba(31,119,180,0.12); }
:is(.ann-caption, .adj-caption) .ann-w.ann-cur { box-shadow: inset 0 -3px 0 #1f77b4; }
/* A span's key (and fix) after its last word, on the line of the text (a raised badge covered the line above). */
:is(.ann-caption, .adj-caption) .ann-w[data-badge]::after { content: attr(data-badge); font: 600 0.62em/1.2 monospace;
  vertical-align: 0.15em; margin: 0 2px 0 3px; padding: 0 3px; border-radius: 3px; background: #31333f; color: #fff;
  cursor: pointer; white-space: nowrap; }
.ann-spans { display: flex; flex-direction: column; gap: 2px; margin: 4px 0 2px 0; font-size: 0.85rem; }
.ann-spans:empty { display: none; }
.ann-span-row { display: flex; align-items: center; gap: 0.4rem; padding: 1px 4px; border-radius: 4px; cursor: pointer; }
.ann-span-row:focus, .ann-span-row:hover { background: rgba(31,119,180,0.10); outline: none; }
.ann-span-dot { width: 0.7rem; height: 0.7rem; border-radius: 2px; flex: none; }
.ann-span-row b { font-weight: 600; white-space: nowrap; }
.ann-span-words { color: #555; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 1 1 auto; }
.ann-span-fix { flex: 0 1 14rem; min-width: 6rem; font-size: 0.85rem; padding: 0 4px; border: 1px solid rgba(49,51,63,0.3);
  border-radius: 3px; }
.ann-span-del { border: none; background: transparent; cursor: pointer; color: #8a1c1c; padding: 0 4px; }
.st-key-ann_spans, .st-key-adj_spans { display: none; }
:is(.ann-caption, .adj-caption) .ann-chunk { cursor: text; user-select: none; -webkit-user-select: none; }
.ann-caption { overflow-wrap: anywhere; }
.ann-caption[data-long] { font-size: 1rem; line-height: 1.5; max-height: 52vh; overflow-y: auto; }
</style>"""


def check_keys(tax: Taxonomy | None = None) -> None:
    """InputError when a taxonomy key is one of the span keys."""
    tax = tax or taxonomy()
    for t in tax.types:
        if t.key in SPAN_KEYS:
            raise InputError(f"keyboard key {t.key!r} of type {t.id!r} is taken by the span key {SPAN_KEYS[t.key]!r}",
                             "guidelines/taxonomy.toml")


def field_value(spans) -> str:
    """The spans as the hidden field holds them (JSON)."""
    return json.dumps(spans_json(spans), ensure_ascii=False, separators=(",", ":"))


def read_field(value) -> tuple:
    """The spans the page sent (InputError when the field does not hold a list of spans)."""
    return parse_spans(value or "[]")


def script(tax: Taxonomy | None = None, *, prefix: str = "ann", caption_testid: str = "ann-caption",
           key_state: str = "__annotatorKeyState", commit: bool = False) -> str:
    """The spans script with its configuration: each type's key, name and group colour, the accurate key, and
    the page's names: its widget ``prefix`` (the field ``<prefix>_spans``, the boxes ``<prefix>_type_<id>``,
    the panel marker and the ``<prefix>-help`` guide), the caption's test id and the window property of its
    key handler's state (annotator.ui.widgets.keys). ``commit``: the field is outside a form, so each change is sent.
    Annotate (``prefix`` "ann") lists the spans under the caption and edits each fix there; elsewhere a fix
    is asked for in a dialog."""
    tax = tax or taxonomy()
    check_keys(tax)
    colour = group_colours(tax)
    config = json.dumps({"types": {t.id: {"key": t.key, "name": t.name, "colour": colour[t.id]} for t in tax.types},
                         "keyToType": {t.key: t.id for t in tax.types}, "accurateKey": tax.accurate_key,
                         "field": f"{prefix}_spans", "prefix": prefix, "caption": caption_testid,
                         "keyState": key_state, "commit": commit, "list": prefix == "ann"})
    return "<script>\n" + FRAMES_JS + _JS.replace(_CONFIG_SLOT, config) + "</script>"


def read_page_field(value, caption: str) -> tuple:
    """The spans the annotate page sent, as :func:`read_field` reads them; a span it refuses is named by its words
    (counted from 1) with what to do on the page, instead of by its place in the field."""
    try:
        return read_field(value)
    except InputError as exc:
        m = re.match(r"span (\d+): (.*)$", exc.detail, re.S)
        try:
            raw = json.loads(value)[int(m.group(1)) - 1] if m else None
            span = Span(int(raw["start"]), int(raw["end"]), "")
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            raise exc from None
        where, rest = _words_named(span, caption.split()), m.group(2)
        if rest.startswith("the fix "):
            raise InputError(f"the suggested fix of {where} {rest[len('the fix '):]}: change it in the list of spans "
                             "under the caption, or remove the span") from None
        raise InputError(f"the span on {where}: {rest}; remove it (select its words, then Backspace)") from None


def _words_named(span, words) -> str:
    """``word 4 (“cat”)`` / ``words 8–9 (“sofa number”)``: a span's words as the page counts them."""
    shown = " ".join(words[span.start:span.end])
    if len(shown) > 60:
        shown = shown[:57] + "…"
    where = f"word {span.start + 1}" if span.end - span.start == 1 else f"words {span.start + 1}–{span.end}"
    return f"{where} (\u201c{shown}\u201d)"


def page_refusal(spans, *, label, error_types, caption: str, tax: Taxonomy | None = None) -> str | None:
    """Why the annotate page cannot save these spans with this judgement, said in the page's terms (words
    counted from 1 as the annotator sees them, and what to do about it on the page), or None when the
    core has nothing against them here (annotator.spans.check_spans says what else is wrong)."""
    tax = tax or taxonomy()
    words = caption.split()
    ticked = set(error_types or ())

    def named(span) -> str:
        return _words_named(span, words)

    remove = "or remove the mark (select its words, then Backspace)"
    for span in spans or ():
        if label != "inaccurate":
            return (f"The caption is not marked Inaccurate but {named(span)} carries an error mark: choose "
                    f"Inaccurate (key {tax.inaccurate_key}), {remove}.")
        if span.type not in ticked and span.type in tax.ids:
            t = tax.get(span.type)
            return (f"{named(span)[:1].upper()}{named(span)[1:]} is marked {t.name}, which is not ticked: tick "
                    f"{t.name} (key {t.key}), {remove}.")
    return None


def marked_caption_html(text: str, spans, tax: Taxonomy | None = None) -> str:
    """The caption as escaped HTML with its spans as the annotate page draws them: each marked word in its type's
    group colour, and after a span's last word its type key (and ``→ fix``)."""
    tax = tax or taxonomy()
    colour = group_colours(tax)
    words = text.split()
    cover: dict[int, list[str]] = {}
    ends: dict[int, list[str]] = {}
    for s in sorted(spans or ()):
        if s.type not in colour:
            continue
        for i in range(s.start, min(s.end, len(words))):
            cover.setdefault(i, []).append(s.type)
        label = tax.get(s.type).key + (f" → {s.fix}" if s.fix is not None else "")
        ends.setdefault(min(s.end, len(words)) - 1, []).append(label)
    out = []
    for i, w in enumerate(words):
        piece = html.escape(w)
        if i in cover:
            names = ", ".join(tax.get(t).name for t in cover[i])
            piece = (f'<mark class="span-word" style="background:{colour[cover[i][0]]}" '
                     f'title="{html.escape(names)}">{piece}</mark>')
        if i in ends:
            piece += f'<sup class="span-key">{html.escape(" ".join(ends[i]))}</sup>'
        out.append(piece)
    return " ".join(out)
