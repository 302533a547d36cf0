"""Team (leads): progress, speed and agreement of every annotator of the project."""

from annotator import ui
from annotator.ui import team

ctx = ui.page_setup("team")
team.render(ctx)
