"""Correction: fix one error type at a time, conservatively, and watch the scores move."""

from annotator import ui
from annotator.ui import correct

ctx = ui.page_setup("correct")
correct.render(ctx)
