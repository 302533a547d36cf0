"""Log-in page (the default page while nobody is logged in)."""

from annotator import ui
from annotator.ui import login

ui.ensure_shell()
login.render(ui.get_store())
