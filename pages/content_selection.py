"""Content selection: which boxes do descriptions mention, and how close do baselines and systems come?"""

from annotator import ui
from annotator.ui import content_selection

ctx = ui.page_setup("content_selection")
content_selection.render(ctx)
