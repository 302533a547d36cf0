"""The exceptions of the metrics package.

They live in a module of their own that imports nothing else from the
package, so every other module (``base``, ``tokenize``, ``java``, the
metrics) can import them without an import cycle.
"""

from __future__ import annotations

from ..errors import AnnotatorError, InputError


class MetricUnavailable(AnnotatorError):
    """A metric cannot run here (METEOR and PTB tokenisation need Java); the message says what is missing."""


class MetricInputError(InputError, ValueError):
    """Captions, references or samples that cannot be scored (wrong lengths, no references, an unknown metric)."""
