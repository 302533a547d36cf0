"""The websocket's origin check, served in front of Streamlit's by serve.py (``st.App(middleware=...)``).

Streamlit accepts a websocket from its own origin and also from any page on ``localhost`` or the machine's
addresses, whatever the port, so a page of another web server on this machine could drive the app. This
middleware closes every websocket handshake whose ``Origin`` is not the server's own
(annotator.accounts.access.is_own_origin) before Streamlit sees it; the browser then gets no session at all.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

#: The websocket close code for a policy violation; before the handshake is accepted the client gets HTTP 403.
POLICY_VIOLATION = 1008


def _allowed_origins() -> list[str]:
    import streamlit as st
    return list(st.get_option("server.corsAllowedOrigins") or [])


class OriginGuard:
    """Pure ASGI middleware: refuse websocket handshakes from another origin; pass everything else on."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "websocket":
            from ...accounts.access import is_own_origin
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
            origin, host = headers.get("origin"), headers.get("host")
            if not is_own_origin(origin, host, _allowed_origins()):
                log.warning("refused a websocket from another origin (Origin %r, Host %r)", origin, host)
                await send({"type": "websocket.close", "code": POLICY_VIOLATION})
                return
        await self.app(scope, receive, send)
