"""How many examples a Hypothesis property runs, under the run's settings profile.

Profiles (registered in tests/conftest.py, chosen with ``pytest --hypothesis-profile NAME``):

``default``  every property runs the count its test states: high where the property is subtle (the fast MTLD
             paths, tokenisers, markup round trips), modest elsewhere. ``make test`` and ``make check`` use it.
``deep``     ten times each count, for a nightly run.
"""

from __future__ import annotations

from hypothesis import settings

#: max_examples of the default profile: the base the stated counts are scaled from.
BASE_EXAMPLES = 100


def examples(n: int) -> int:
    """``n`` examples in the default profile, scaled by the loaded profile's max_examples (``deep``: 10 n)."""
    return max(1, round(n * settings.default.max_examples / BASE_EXAMPLES))
