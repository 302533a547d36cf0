"""Adjudication (leads): see each disagreement side by side and set the final judgement."""

from annotator import ui
from annotator.ui import adjudicate

ctx = ui.page_setup("adjudicate")
adjudicate.render(ctx)
