"""Where a log-in opens: the project with an annotator's work, or the page and project a lead used last."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import NotFound
from ..model import Role
from .access import PAGES_BY_ID

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


def work_left(store, user: str, role: Role | str, project: str) -> int:
    """Captions of ``user``'s queue in ``project`` still to do (fine passes waiting count as to do)."""
    from ..annotation import Queue
    try:
        progress = Queue.open(store, user, role, project).progress()
    except NotFound:
        return 0
    return progress.assigned - progress.done


def landing(store, user_id: int, user: str, role: Role | str) -> Landing:
    """Where ``user`` starts after logging in.

    An annotator opens Annotate on the project they worked on last if work is left there, else on the first
    project (by name) with work left; with none left anywhere, on their last project. Other roles open the
    page and project they used last (a page their role may no longer open is left out); without one, their
    role's own page (:data:`ROLE_PAGE`: leads and admins Team, analysts Error analysis), not Annotate.
    """
    from .sessions import recall
    from ..store.projects import project_names
    role = Role(role)
    remembered = recall(store, user_id, [LAST_PROJECT, LAST_PAGE])
    names = project_names(store)
    last = remembered.get(LAST_PROJECT)
    last = last if last in names else None
    if role is Role.ANNOTATOR:
        for name in ([last] if last else []) + [n for n in names if n != last]:
            if work_left(store, user, role, name) > 0:
                return Landing(name, "annotate")
        return Landing(last, "annotate")
    page = remembered.get(LAST_PAGE)
    spec = PAGES_BY_ID.get(page or "")
    return Landing(last, page if spec is not None and role in spec.roles else ROLE_PAGE.get(role))
