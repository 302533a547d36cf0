"""Blind correction: the references and the live score change stay hidden until a correction is saved.

The error-analysis study corrected captions without looking at the reference descriptions; seeing them (or a
score that rises as the edit approaches them) steers edits towards the references and inflates the gain. Blind
mode is on unless a lead switches it off for a project (the project setting ``correction_blind``). Each
revision saved on the Correction page records the mode it was typed in (``corrections.blind``): blind only while
that caption's references were hidden — once a first save has shown them, later revisions of the caption are
typed with the references on screen (:func:`typed_blind`). Corrections stored by the command line or an import
record none, since the tool did not see what their author looked at.

Two other pages show what blind correction hides: Annotate shows each item's references, and Rescoring scores
the stored corrections and any uploaded caption file against the references. While blind correction is on, a
lead can close those views to correctors — analysts (the project setting ``correction_blind_views``;
:func:`views_closed_for` says whether a user's pages hide them): leads and admins keep them.
"""

from __future__ import annotations

from ..accounts.access import LEADS, REVIEW, require_role
from ..model import Role

#: The project setting that holds the mode ("on" / "off").
BLIND_SETTING = "correction_blind"


def project_blind(store, project: str) -> bool:
    """True when corrections of ``project`` are made blind (the default)."""
    from ..store.project_settings import get_setting
    from ..store.projects import project_id
    with store.read() as conn:
        return get_setting(conn, project_id(conn, project), BLIND_SETTING, "on") != "off"


def set_project_blind(store, project: str, on: bool, *, actor_role: Role | str = Role.ADMIN) -> bool:
    """Switch blind correction on or off for ``project`` (lead/admin only); returns the mode stored."""
    from ..store.project_settings import set_setting
    from ..store.projects import project_id
    require_role(actor_role, LEADS, "switching blind correction")
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), BLIND_SETTING, "on" if on else "off")
    return bool(on)


#: The project setting that closes the Annotate page's references and the Rescoring page's scores to correctors
#: while blind correction is on ("open" / "closed").
BLIND_VIEWS_SETTING = "correction_blind_views"


def typed_blind(project_is_blind: bool, references_shown: bool) -> bool:
    """The mode a revision is typed in: blind only when the project is blind and the caption's references were
    not on screen (they show once the caption has a saved correction)."""
    return bool(project_is_blind and not references_shown)


def references_shown(project_is_blind: bool, has_saved_correction: bool) -> bool:
    """Whether the Correction page shows a caption's references (and its score change) to the corrector."""
    return not project_is_blind or has_saved_correction


def project_views_closed(store, project: str) -> bool:
    """True when a lead closed the references and scores of other pages to correctors for ``project``."""
    from ..store.project_settings import get_setting
    from ..store.projects import project_id
    with store.read() as conn:
        return get_setting(conn, project_id(conn, project), BLIND_VIEWS_SETTING, "open") == "closed"


def set_project_views_closed(store, project: str, closed: bool, *, actor_role: Role | str = Role.ADMIN) -> bool:
    """Close (or open) the Annotate page's references and the Rescoring page's scores to correctors of
    ``project`` while blind correction is on (lead/admin only); returns the setting stored."""
    from ..store.project_settings import set_setting
    from ..store.projects import project_id
    require_role(actor_role, LEADS, "closing views during blind correction")
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), BLIND_VIEWS_SETTING, "closed" if closed else "open")
    return bool(closed)


#: Who corrects without leading: the Correction page's users other than leads and admins.
CORRECTORS = REVIEW - LEADS


def views_closed_for(store, project: str, role: Role | str) -> bool:
    """True when a user of ``role`` may not see references or scores outside the Correction page: the user is a
    corrector (an analyst; annotators do not correct, leads and admins keep every view), blind correction is on
    and a lead closed the views."""
    return Role(role) in CORRECTORS and project_blind(store, project) and project_views_closed(store, project)


def blind_label(blind: bool | None) -> str:
    """How an export shows the mode of one correction."""
    return {True: "blind", False: "references shown"}.get(blind, "not recorded")
