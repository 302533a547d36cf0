"""Where a log-in opens: the project with an annotator's work, or the page and project a lead used last."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import NotFound
from ..model import Role
from ..store.assignments import work_left as queue_work_left
from ..store.projects import project_id, project_names
from ..store.users import user_id as user_id_of
from .access import PAGES_BY_ID
from .sessions import recall

#: Keys of the places remembered per user (annotator.accounts.sessions.remember).
LAST_PROJECT = "last_project"
LAST_PAGE = "last_page"


#: The page a role starts on when it has no last page to go back to (annotators: Annotate, by the rule below).
ROLE_PAGE = {Role.LEAD: "team", Role.ADMIN: "team", Role.ANALYST: "analysis"}


@dataclass(frozen=True)
class Landing:
    """The project (None: keep the default) and page id (None: the default page) a log-in opens."""

    project: str | None
    page: str | None


def work_left(store, user: str, project: str) -> int:
    """Captions of ``user``'s queue in ``project`` still to do (fine passes waiting count as to do)."""
    with store.read() as conn:
        try:
            return queue_work_left(conn, user_id_of(conn, user), project_id(conn, project))
        except NotFound:
            return 0


def landing(store, user_id: int, user: str, role: Role | str) -> Landing:
    """Where ``user`` starts after logging in.

    An annotator opens Annotate on the project they worked on last if work is left there, else on the first
    project (by name) with work left; with none left anywhere, on their last project. Other roles open the
    page and project they used last (a page their role may no longer open is left out); without one, their
    role's own page (:data:`ROLE_PAGE`: leads and admins Team, analysts Error analysis), not Annotate.
    """
    role = Role(role)
    remembered = recall(store, user_id, [LAST_PROJECT, LAST_PAGE])
    names = project_names(store)
    last = remembered.get(LAST_PROJECT)
    last = last if last in names else None
    if role is Role.ANNOTATOR:
        for name in ([last] if last else []) + [n for n in names if n != last]:
            if work_left(store, user, name) > 0:
                return Landing(name, "annotate")
        return Landing(last, "annotate")
    page = remembered.get(LAST_PAGE)
    spec = PAGES_BY_ID.get(page or "")
    return Landing(last, page if spec is not None and role in spec.roles else ROLE_PAGE.get(role))
