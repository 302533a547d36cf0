"""Judges (leads, analysts): how far to trust each AI judge, measured against the human labels."""

from annotator import ui
from annotator.ui import judges

ctx = ui.page_setup("judges")
judges.render(ctx)
