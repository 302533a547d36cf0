"""Assignment (leads and admins): split a project across annotators, with a blind double-annotation sample."""

from annotator import ui
from annotator.ui import assign

ctx = ui.page_setup("assign")
assign.render(ctx)
