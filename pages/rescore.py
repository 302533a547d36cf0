"""Rescoring: how much would the scores improve if one kind of error were fixed?"""

from annotator import ui
from annotator.ui import rescore

ctx = ui.page_setup("rescore")
rescore.render(ctx)
