"""Transitional: annotator.ui.widgets.formatting under its old name, only for the Annotate screen's modules, which import
it from here until they move into annotator/ui/annotate/ (then this file goes)."""

from .widgets.formatting import show_table  # noqa: F401
