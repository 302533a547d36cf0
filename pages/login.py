"""Log-in page (the default page while nobody is logged in)."""

from annotator.ui import login

login.render_page()
