"""Error analysis (analysts, leads): accuracy, errors per description and error types, per system and layer."""

from annotator import ui
from annotator.ui import analysis

ctx = ui.page_setup("analysis")
analysis.render(ctx)
