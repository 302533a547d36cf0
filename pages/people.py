"""People (admins): accounts, roles, passwords, locks; every change recorded."""

from annotator import ui
from annotator.ui import people

ctx = ui.page_setup("people")
people.render(ctx)
