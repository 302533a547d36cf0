"""Lexical diversity: how varied is each system's vocabulary next to the references, and does it track human judgement?"""

from annotator import ui
from annotator.ui import diversity

ctx = ui.page_setup("diversity")
diversity.render(ctx)
