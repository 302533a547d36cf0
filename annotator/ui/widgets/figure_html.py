"""The figure's markup, for every page that shows a caption's picture (Annotate, Adjudication, Agreement, Error
analysis): the boxes over the picture, the references with their mentions, the picture's ratio, and a type's short
name. figure.css is its style, box_links.js links mentions and boxes by hover. Plain builders (no streamlit); every
user or data string is HTML-escaped."""

from __future__ import annotations

import html
from pathlib import Path

#: The picture with its boxes and the references (figure.css), read once per process.
FIGURE_CSS = Path(__file__).with_name("figure.css").read_text(encoding="utf-8")
#: The same as a style element, for the pages that show the figure.
FIGURE_STYLE = "<style>\n" + FIGURE_CSS + "</style>"


def reference_html(text: str, mentions, box_order: list[str]) -> str:
    """A reference with its box mentions highlighted (tokens escaped first, then marked up)."""
    from ...images import box_colour
    tokens = [html.escape(t) for t in text.split()]
    opening: dict[int, str] = {}
    closing: dict[int, str] = {}
    for m in mentions:
        if not (0 <= m.start < m.end <= len(tokens)):
            continue  # a stale span must not break the display
        idx = box_order.index(m.box_ids[0]) if m.box_ids and m.box_ids[0] in box_order else -1
        r, g, b = box_colour(idx) if idx >= 0 else (160, 160, 160)
        ids = html.escape(",".join(m.box_ids))
        refs = html.escape(" ".join(m.box_ids))
        opening[m.start] = opening.get(m.start, "") + (
            f'<mark data-box="{refs}" tabindex="0" style="background: rgba({r},{g},{b},0.35); '
            f'border-bottom: 3px solid rgb({r},{g},{b}); padding: 0 2px; border-radius: 3px">')
        closing[m.end - 1] = f'<sub style="font-size: 0.7em; opacity: 0.8"> {ids}</sub></mark>' + closing.get(m.end - 1, "")
    out = []
    for i, tok in enumerate(tokens):
        out.append(opening.get(i, "") + tok + closing.get(i, ""))
    return '<div class="ann-ref">' + " ".join(out) + "</div>"


def box_overlay_html(item, hidden=()) -> str:
    """The boxes over the picture: each box's outline in its colour, and its label as text (placed by
    annotator.images.place_labels so labels do not overlap), in fractions of the picture so they follow
    its shown size; a second, stronger outline lights up with the box's mentions in the references
    (annotator/ui/widgets/box_links.js)."""
    from ...images import box_colour, place_labels
    places = place_labels(item.boxes, item.width, item.height, hidden=hidden)
    by_id = {b.box_id: b for b in item.boxes}
    out = [f'<div class="ann-overlay" data-testid="ann-box-overlay" style="aspect-ratio: {item.width} / {item.height}">']
    for p in places:
        b = by_id[p.box_id]
        r, g, bl = box_colour(p.index)
        ink = "#000" if 0.2126 * r + 0.7152 * g + 0.0722 * bl > 140 else "#fff"
        ref = html.escape(p.box_id)
        place = (f"left:{100 * b.x / item.width:.3f}%;top:{100 * b.y / item.height:.3f}%;"
                 f"width:{100 * b.w / item.width:.3f}%;height:{100 * b.h / item.height:.3f}%;"
                 f"border-color:rgb({r},{g},{bl})")
        out.append(f'<div class="ann-boxline" data-box="{ref}" style="{place}"></div>')
        out.append(f'<div class="ann-boxhl" data-box="{ref}" style="{place}"></div>')
        out.append(f'<span class="ann-boxlabel" data-box="{ref}" tabindex="0" style="left:{100 * p.left:.3f}%;'
                   f'top:{100 * p.top:.3f}%;background:rgb({r},{g},{bl});color:{ink}">{html.escape(p.text)}</span>')
    out.append("</div>")
    return "".join(out)


def short_name(type_name: str, group: str) -> str:
    """The type's name without its group word ("Wrong subject" under Subject → "Wrong"), for the narrow columns."""
    words = type_name.split()
    kept = [w for w in words if w.lower() != group.lower()]
    text = " ".join(kept) if kept else type_name
    return text[:1].upper() + text[1:]


def figure_ratio_html(item) -> str:
    """The picture's width / height as a style variable of the figure, so its height can be capped (the
    references below it stay in view) while its boxes' labels keep their places over it."""
    if not (getattr(item, "width", 0) and getattr(item, "height", 0)):
        return '<style>.st-key-ann_figure { --ann-ratio: 1.3333; }</style>'
    return f'<style>.st-key-ann_figure {{ --ann-ratio: {item.width / item.height:.4f}; }}</style>'
