"""Annotate: judge generated captions (accurate / inaccurate, then error types), keyboard-driven."""

from annotator import ui
from annotator.ui import annotate

ctx = ui.page_setup("annotate")
annotate.render(ctx)
