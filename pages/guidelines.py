"""Guidelines: task instructions, the error types with definitions and examples, and the contrasts."""

from annotator import ui
from annotator.ui import guidelines

ctx = ui.page_setup("guidelines")
guidelines.render(ctx)
