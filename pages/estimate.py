"""Error estimates (analysts, leads): each system's error profile for all its captions, from the human sample
and the automatic detectors, with intervals."""

from annotator import ui
from annotator.ui import estimate

ctx = ui.page_setup("estimate")
estimate.render(ctx)
