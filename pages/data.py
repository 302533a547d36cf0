"""Data & users: list projects, import files, export a project. (User management: see the last section.)"""

from annotator import ui
from annotator.ui import data

ctx = ui.page_setup("data")
data.render(ctx)
