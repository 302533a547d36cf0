"""Who may open which page and act on which project: the one guard.

Pages call :func:`check_page` through ``annotator.ui.page_setup``; the CLI
and core functions call :func:`require_role`. Hiding a page from the menu is
only convenience: the guard is what refuses.
"""

from __future__ import annotations

import functools
import ipaddress
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import PermissionDenied
from ..model import Role

ALL = frozenset(Role)
REVIEW = frozenset({Role.LEAD, Role.ANALYST, Role.ADMIN})
LEADS = frozenset({Role.LEAD, Role.ADMIN})


@dataclass(frozen=True)
class PageSpec:
    """A page of the app: its id, script, title, icon, menu section and allowed roles."""

    page_id: str
    path: str
    title: str
    icon: str
    section: str
    roles: frozenset


PAGES: tuple[PageSpec, ...] = (
    PageSpec("annotate", "pages/annotate.py", "Annotate", ":material/edit_note:", "Annotation", ALL),
    PageSpec("guidelines", "pages/guidelines.py", "Guidelines", ":material/menu_book:", "Annotation", ALL),
    PageSpec("assign", "pages/assign.py", "Assignment", ":material/group_add:", "Team", LEADS),
    PageSpec("team", "pages/team.py", "Team", ":material/groups:", "Team", LEADS),
    PageSpec("agreement", "pages/agreement.py", "Agreement", ":material/handshake:", "Team", LEADS),
    PageSpec("adjudicate", "pages/adjudicate.py", "Adjudication", ":material/gavel:", "Team", LEADS),
    PageSpec("analysis", "pages/analysis.py", "Error analysis", ":material/bar_chart:", "Analysis", REVIEW),
    PageSpec("estimate", "pages/estimate.py", "Error estimates", ":material/query_stats:", "Analysis", REVIEW),
    PageSpec("judges", "pages/judges.py", "Judges", ":material/smart_toy:", "Analysis", REVIEW),
    PageSpec("correct", "pages/correct.py", "Correction", ":material/spellcheck:", "Analysis", REVIEW),
    PageSpec("rescore", "pages/rescore.py", "Rescoring", ":material/calculate:", "Analysis", REVIEW),
    PageSpec("content_selection", "pages/content_selection.py", "Content selection", ":material/select_all:", "Analysis", REVIEW),
    PageSpec("diversity", "pages/diversity.py", "Lexical diversity", ":material/translate:", "Analysis", REVIEW),
    PageSpec("people", "pages/people.py", "People", ":material/manage_accounts:", "Admin", frozenset({Role.ADMIN})),
    PageSpec("data", "pages/data.py", "Data & users", ":material/database:", "Admin", frozenset({Role.ADMIN, Role.LEAD})),
)

PAGES_BY_ID = {p.page_id: p for p in PAGES}


def pages_for(role: Role) -> list[PageSpec]:
    """The pages a role may open, in menu order."""
    return [p for p in PAGES if Role(role) in p.roles]


def check_page(role: Role | str | None, page_id: str) -> PageSpec:
    """Return the page spec if ``role`` may open ``page_id``; raise PermissionDenied otherwise."""
    spec = PAGES_BY_ID.get(page_id)
    if spec is None:
        raise PermissionDenied(f"there is no page called {page_id!r}")
    if role is None:
        raise PermissionDenied("please log in first")
    if Role(role) not in spec.roles:
        raise PermissionDenied(f"the {spec.title} page is not open to the {Role(role).value} role")
    return spec


def require_role(role: Role | str | None, allowed, action: str) -> None:
    """Raise PermissionDenied unless ``role`` is one of ``allowed``; ``action`` names what was refused."""
    if role is None or Role(role) not in {Role(a) for a in allowed}:
        who = Role(role).value if role is not None else "anonymous"
        raise PermissionDenied(f"{action} is not allowed for the {who} role")


@dataclass(frozen=True)
class ForwardingHeaders:
    """The request headers a proxy, load balancer or CDN adds (annotator/forwarding_headers.toml): exact names,
    and parts of a name that mark one too (``forwarded``, ``client-ip``)."""

    names: frozenset[str]
    contains: tuple[str, ...]

    def matches(self, header: str) -> bool:
        """True when a header of this name says the request was forwarded."""
        name = header.strip().lower()
        return name in self.names or any(part in name for part in self.contains)


@functools.cache
def forwarding_headers() -> ForwardingHeaders:
    """The forwarding-style headers, read once from annotator/forwarding_headers.toml."""
    data = tomllib.loads((Path(__file__).parent / "forwarding_headers.toml").read_text(encoding="utf-8"))
    return ForwardingHeaders(frozenset(n.lower() for n in data["names"]), tuple(c.lower() for c in data["contains"]))


#: Host names that always mean this machine; IP literals count when they are loopback addresses.
LOOPBACK_NAMES = frozenset({"localhost"})


def _split_host(netloc: str) -> tuple[str, int | None] | None:
    """(host, port or None) of a ``Host`` header value or a URL's netloc; None when it is malformed."""
    netloc = netloc.strip()
    if not netloc or "@" in netloc or "/" in netloc:
        return None
    if netloc.startswith("["):  # [IPv6]:port
        host, sep, rest = netloc[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, sep, port_text = netloc.rpartition(":") if ":" in netloc else (netloc, "", None)
        if ":" in host:
            return None  # an IPv6 address without brackets
    if port_text is None:
        return host.lower(), None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return host.lower(), int(port_text)


def is_loopback_name(host: str) -> bool:
    """True for ``localhost`` and loopback address literals (127.0.0.0/8, ::1, IPv4-mapped loopback)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def is_loopback_host(host_header: str | None, port: int) -> bool:
    """True when a ``Host`` header names this machine by a loopback name or address with the server's ``port``.

    A page whose own name was rebound to 127.0.0.1 (DNS rebinding) reaches the server with its own name in
    ``Host``: such a request is not local, whatever its peer address. No port means the scheme's default
    (80 or 443; the header does not say which).
    """
    parts = _split_host(host_header or "")
    if parts is None:
        return False
    host, given = parts
    return is_loopback_name(host) and (int(port) in (80, 443) if given is None else given == int(port))


def is_loopback_origin(origin: str | None, port: int) -> bool:
    """True when an ``Origin`` header is ``http(s)://`` a loopback name or address with the server's ``port``."""
    if not origin:
        return False
    scheme, sep, netloc = origin.strip().partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        return False
    parts = _split_host(netloc)
    if parts is None:
        return False
    host, given = parts
    default = 443 if scheme == "https" else 80
    return is_loopback_name(host) and (given if given is not None else default) == int(port)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def is_local_client(peer: str | None, headers: Mapping[str, str], *, port: int) -> bool:
    """True when a request comes straight from the server's own machine and asked for it by a loopback name.

    All of these must hold: a loopback peer address (``None`` is how Streamlit
    reports one); none of the headers a proxy adds (:func:`forwarding_headers`);
    a ``Host`` that is a loopback name or address with the server's ``port``
    (:func:`is_loopback_host`); and an ``Origin``, when there is one, of the
    same kind. Local mode (no account can log in yet: the browser works as the
    admin) is allowed only for such requests. Behind a reverse proxy every
    request reaches the app from 127.0.0.1, so the proxy's headers are what
    tell. A page on another site whose name was rebound to 127.0.0.1 connects
    from a loopback peer too, but its ``Host`` and ``Origin`` carry its own
    name. Only a harness without an HTTP connection (Streamlit's AppTest) has no
    headers at all; every browser request and websocket handshake carries ``Host``.
    """
    forwarding = forwarding_headers()
    if any(forwarding.matches(name) for name in headers):
        return False
    host = _header(headers, "host")
    origin = _header(headers, "origin")
    if headers and not is_loopback_host(host, port):
        return False
    if origin is not None and not is_loopback_origin(origin, port):
        return False
    if peer is None:
        return True
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def is_own_origin(origin: str | None, host_header: str | None, allowed: Iterable[str] = ()) -> bool:
    """True when a websocket handshake's ``Origin`` is the server's own: the same scheme-less address as the
    ``Host`` the browser asked for (a page of this server), or one of ``allowed`` exactly (Streamlit's
    ``server.corsAllowedOrigins``). No ``Origin`` (a client that is not a browser) is allowed.

    Streamlit itself also admits every page on ``localhost``, ``127.0.0.1`` or the machine's addresses, on
    any port: another local web server's page could then drive this app. Here only the server's own
    origins are.
    """
    if origin is None:
        return True
    origin = origin.strip()
    if origin in {a.strip() for a in allowed if a and a.strip()}:
        return True
    scheme, sep, netloc = origin.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not host_header:
        return False
    mine, theirs = _split_host(host_header), _split_host(netloc)
    if mine is None or theirs is None:
        return False
    default = 443 if scheme.lower() == "https" else 80
    return mine[0] == theirs[0] and (mine[1] or default) == (theirs[1] or default)
