"""The Data & users screen: page.py (projects, imports, exports); download.py the judgements download;
upload_refusals.js refuses an oversized upload in the browser."""

from .page import render  # noqa: F401
