"""Blind correction: the references and the live score change stay hidden until a correction is saved.

The error-analysis study corrected captions without looking at the reference descriptions; seeing them (or a
score that rises as the edit approaches them) steers edits towards the references and inflates the gain. Blind
mode is on unless a lead switches it off for a project (the project setting ``correction_blind``). Each
correction saved on the Correction page records the mode it was made in (``corrections.blind``); corrections
stored by the command line or an import record none, since the tool did not see what their author looked at.
"""

from __future__ import annotations

from ..access import LEADS, require_role
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


def blind_label(blind: bool | None) -> str:
    """How an export shows the mode of one correction."""
    return {True: "blind", False: "references shown"}.get(blind, "not recorded")
