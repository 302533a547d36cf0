"""Who may open which page and act on which project: the one guard.

Pages call :func:`check_page` through ``annotator.ui.page_setup``; the CLI
and core functions call :func:`require_role`. Hiding a page from the menu is
only convenience: the guard is what refuses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import PermissionDenied
from .model import Role

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


#: Request headers that a proxy adds: a request carrying one came from somewhere else, whatever its peer address.
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "via")


def is_local_client(peer: str | None, headers: Mapping[str, str]) -> bool:
    """True when a request comes straight from the server's own machine: a loopback peer address
    (``None`` is how Streamlit reports one) and none of the headers a proxy adds.

    Local mode (no account can log in yet: the browser works as the admin) is
    allowed only for such requests. Behind a reverse proxy every request
    reaches the app from 127.0.0.1, so the proxy's headers are what tell; the
    documented proxy configuration sets X-Forwarded-For.
    """
    if any(name.lower() in FORWARDING_HEADERS for name in headers):
        return False
    if peer is None:
        return True
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback
