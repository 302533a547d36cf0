"""Transitional: annotator.ui.widgets.figure under its old name, only for the Annotate screen's modules, which import
it from here until they move into annotator/ui/annotate/ (then this file goes)."""

from .widgets.figure import references_block  # noqa: F401
