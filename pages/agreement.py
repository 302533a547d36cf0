"""Agreement dashboard (leads): kappa with its interval, error-type agreement, disagreements, practice items."""

from annotator import ui
from annotator.ui import agreement

ctx = ui.page_setup("agreement")
agreement.render(ctx)
