"""Transitional: annotator.ui.widgets.newer under its old name, only for the Annotate screen's modules, which import
it from here until they move into annotator/ui/annotate/ (then this file goes)."""

from .widgets.newer import newer_notice  # noqa: F401
