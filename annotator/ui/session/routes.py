"""The HTTP routes behind the session cookie, served beside the app by serve.py (``st.App(routes=...)``).

A Streamlit script cannot answer an HTTP request, so it cannot set an HttpOnly cookie; these two routes can.
``POST /_annotator/session`` takes the one-time code of a log-in (annotator.accounts.sessions.redeem_handoff) and
sets the cookie; ``POST /_annotator/session/end`` logs out the session the cookie belongs to and clears it.
Both want the ``X-Annotator-Session: 1`` header (a page of another site cannot send it without the
browser asking this server first, which it does not allow) and never reveal why a request was refused.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...accounts.sessions import COOKIE_NAME, end_session_by_cookie, redeem_handoff

log = logging.getLogger(__name__)

SESSION_PATH = "/_annotator/session"
END_PATH = "/_annotator/session/end"
HEADER = "x-annotator-session"

_served = False


def routes() -> list[Route]:
    """The cookie routes, for ``st.App(..., routes=routes())``."""
    global _served
    _served = True
    return [Route(SESSION_PATH, _set_cookie, methods=["POST"]), Route(END_PATH, _end, methods=["POST"])]


def served() -> bool:
    """True when this process serves the cookie routes (started through serve.py); without them a log-in lasts
    as long as its browser tab."""
    return _served


@lru_cache(maxsize=4)
def _store(url: str):
    from ...store import open_store
    return open_store(url)


def _current_store():
    from ...config import load_settings
    return _store(load_settings().database_url)


def _https(request: Request) -> bool:
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "").lower() == "https"


def _plain(status: int) -> Response:
    return Response(status_code=status, headers={"Cache-Control": "no-store"})


async def _set_cookie(request: Request) -> Response:
    from ...errors import StoreUnavailable
    if request.headers.get(HEADER) != "1":
        return _plain(400)
    try:
        body = await request.json()
        code = str(body.get("code") or "")
    except Exception:  # not JSON, not an object: the same answer as a wrong code
        return _plain(400)
    try:
        result = await run_in_threadpool(redeem_handoff, _current_store(), code)
    except StoreUnavailable:
        return _plain(503)
    if result is None:
        return _plain(403)
    value, max_age = result
    response = _plain(204)
    response.set_cookie(COOKIE_NAME, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                        secure=_https(request))
    return response


async def _end(request: Request) -> Response:
    from ...errors import StoreUnavailable
    if request.headers.get(HEADER) != "1":
        return _plain(400)
    try:
        await run_in_threadpool(end_session_by_cookie, _current_store(), request.cookies.get(COOKIE_NAME))
    except StoreUnavailable:
        log.warning("the session of a log-out could not be ended: the database is down")
    response = _plain(204)
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=_https(request))
    return response
