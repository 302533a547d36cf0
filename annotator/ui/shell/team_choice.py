"""The team picker the lead's pages share (annotator.team_selection): one selection per project, remembered for
the user across Agreement, Adjudication, Error analysis and Rescoring, and across sessions."""

from __future__ import annotations

import streamlit as st

from ...errors import StoreUnavailable
from ...team_selection import decode_team, encode_team, team_for, team_key

#: Session key: {project: team} as this session last chose or read it.
TEAMS_KEY = "annotator_teams"


def _user_id():
    from ..session.state import USER_KEY
    return (st.session_state.get(USER_KEY) or {}).get("id")


def remembered_team(store, project: str) -> list[str] | None:
    """The user's team for ``project`` (this session's choice, else the stored one), or None."""
    from ...accounts.sessions import recall
    teams = st.session_state.setdefault(TEAMS_KEY, {})
    if project not in teams:
        uid = _user_id()
        stored = None
        if uid is not None:
            try:
                stored = recall(store, uid, [team_key(project)]).get(team_key(project))
            except StoreUnavailable:
                stored = None
        teams[project] = decode_team(stored) if stored else None
    return teams[project]


def _chosen(store, project: str, key: str) -> None:
    from ...accounts.sessions import remember
    team = list(st.session_state.get(key) or [])
    st.session_state.setdefault(TEAMS_KEY, {})[project] = team
    uid = _user_id()
    if uid is not None:
        try:
            remember(store, uid, team_key(project), encode_team(team))
        except StoreUnavailable:
            pass  # kept for this session; stored with the next choice


def team_picker(store, project: str, candidates, *, key: str, minimum: int = 1, label: str = "Annotators", container=None,
                help: str | None = None) -> list[str]:
    """A multiselect of ``candidates`` that starts with the user's team for the project (the remembered one,
    else everyone but stand-in accounts) and remembers what the user chooses. Returns the chosen names."""
    candidates = list(candidates)
    container = container or st
    current = st.session_state.get(key)
    if current is None or st.session_state.get(key + "_project") != project:
        st.session_state[key] = team_for(candidates, remembered_team(store, project), minimum=minimum)
    else:
        st.session_state[key] = [c for c in current if c in candidates]
    st.session_state[key + "_project"] = project
    return container.multiselect(label, candidates, key=key, help=help, on_change=_chosen,
                                 args=(store, project, key))
