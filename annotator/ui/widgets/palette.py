"""The charts' one palette: which colour each series gets, on every chart of every page.

:data:`PALETTE` holds twelve colours that read as lines and bars on white (contrast at least 3:1 against it) and
that differ from each other at least as much as :data:`MIN_DIFFERENCE` (CIE76 distance in CIELAB, roughly the
number of just-noticeable steps): a page's eleven series (content selection's baselines, upper bound and systems)
never share a hue. Colours go out in :data:`PALETTE`'s order, so the first series of a chart are the most
distinct. A page names its series once (:func:`series_colours`) and draws every chart from that mapping
(:func:`category_colour` with ``colours=``), so a series has one colour wherever it appears."""

from __future__ import annotations

import math

#: Blue, orange, green, pink, brown, teal, purple, ochre, navy, coral, bluish green, maroon.
PALETTE = ("#0072b2", "#d95f02", "#2ca02c", "#ff1493", "#6b4f2a", "#0b7f86", "#984ea3", "#b8860b", "#00008b",
           "#e15759", "#009e73", "#800000")
#: The least CIE76 distance between two colours of the palette (tests/ui/widgets/test_palette.py checks it).
MIN_DIFFERENCE = 32.0
#: Dashes of a series drawn dashed (the references a chart compares with: an upper bound, a system's level).
DASHED = [6, 4]
SOLID = [1, 0]


def series_colours(names) -> dict[str, str]:
    """Each of ``names`` (a page's series, in the order they are listed) with its colour from :data:`PALETTE`
    (repeated after twelve)."""
    return {name: PALETTE[k % len(PALETTE)] for k, name in enumerate(dict.fromkeys(names))}


def category_colour(field: str, title: str | None = None, domain=None, *, colours: dict | None = None,
                    legend=None):
    """An Altair colour channel for the categories of ``field``. With ``colours`` (:func:`series_colours` of the
    page's series) each category of ``domain`` (default: all of them) takes its colour there, the same on every
    chart; otherwise ``domain`` (or the data's categories) take :data:`PALETTE` in order. ``legend`` is an
    ``alt.Legend`` (default: below the chart, every label whole)."""
    import altair as alt
    if colours is not None:
        names = list(domain) if domain is not None else list(colours)
        scale = alt.Scale(domain=names, range=[colours.get(n, PALETTE[k % len(PALETTE)]) for k, n in enumerate(names)])
    else:
        n = len(domain) if domain is not None else len(PALETTE)
        scale = alt.Scale(range=[PALETTE[i % len(PALETTE)] for i in range(max(n, 1))],
                          **({"domain": list(domain)} if domain is not None else {}))
    return alt.Color(f"{field}:N", title=title if title is not None else field, scale=scale,
                     legend=legend if legend is not None else whole_legend())


def whole_legend(**kwargs):
    """A legend under the chart with every label whole (no cut names), in as many columns as fit."""
    import altair as alt
    return alt.Legend(orient="bottom", direction="horizontal", columns=kwargs.pop("columns", 4), labelLimit=0,
                      titleLimit=0, symbolStrokeWidth=2, **kwargs)


def _linear(c: float) -> float:
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(colour: str) -> tuple[float, float, float]:
    h = colour.lstrip("#")
    return tuple(_linear(int(h[i:i + 2], 16)) for i in (0, 2, 4))


def contrast_on_white(colour: str) -> float:
    """WCAG contrast ratio of ``colour`` ("#rrggbb") against white."""
    r, g, b = _rgb(colour)
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def difference(a: str, b: str) -> float:
    """CIE76 colour difference of two "#rrggbb" colours (Euclidean distance in CIELAB, D65 white)."""
    def lab(colour):
        r, g, b_ = _rgb(colour)
        x = (0.4124 * r + 0.3576 * g + 0.1805 * b_) / 0.95047
        y = 0.2126 * r + 0.7152 * g + 0.0722 * b_
        z = (0.0193 * r + 0.1192 * g + 0.9505 * b_) / 1.08883

        def f(t):
            return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
        return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
    return math.dist(lab(a), lab(b))
