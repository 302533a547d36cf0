"""The Annotate screen: page.py draws the caption, its picture and the panel; state.py holds the session's keys, the
queue and what the panel sent; callbacks.py the buttons' callbacks (save, skip, move, draft); resend.py a save the
browser kept and sends again, and the page's state marker; form.py the panel form; caption_list.py the caption list;
html.py builds the page's markup; panel.js, next.js and annotate.css are its script and style in the browser."""

from .page import render  # noqa: F401
