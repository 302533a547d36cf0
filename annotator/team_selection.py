"""Whose judgements a lead's pages count by default: one team per user and project, remembered across the
Agreement, Adjudication, Error analysis and Rescoring pages, and which accounts Assignment pre-selects.

Stand-in accounts (the local-mode admin, the sample project's demo annotators) are left out of a default
team unless nobody else is there to count; a lead can still choose them.
"""

from __future__ import annotations

import json

#: The account the browser works as in local mode (annotator.ui.LOCAL_USER names the same one).
LOCAL_USER = "local"


def stand_ins() -> frozenset[str]:
    """Account names that are not real team members: the local-mode admin and the demo annotators."""
    from .sample import DEMO_ANNOTATORS
    return frozenset({LOCAL_USER, *DEMO_ANNOTATORS})


def default_team(candidates, *, minimum: int = 1) -> list[str]:
    """``candidates`` without stand-ins; all of them when fewer than ``minimum`` real ones are left."""
    candidates = list(candidates)
    real = [c for c in candidates if c not in stand_ins()]
    return real if len(real) >= minimum else candidates


def team_for(candidates, remembered, *, minimum: int = 1) -> list[str]:
    """The team a page starts with: the remembered one among ``candidates`` (in their order) when at least
    ``minimum`` of it is there, else :func:`default_team`."""
    remembered = set(remembered or ())
    kept = [c for c in candidates if c in remembered]
    return kept if len(kept) >= max(1, minimum) else default_team(candidates, minimum=minimum)


def team_key(project: str) -> str:
    """The key a user's team for ``project`` is remembered under (annotator.accounts.sessions.remember)."""
    return f"team:{project}"


def encode_team(names) -> str:
    """The stored form of a team."""
    return json.dumps(sorted(set(names)), ensure_ascii=False)


def decode_team(text: str | None) -> list[str]:
    """A stored team ([] for nothing or a damaged value)."""
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def assignable_by_default(users) -> list[str]:
    """The accounts Assignment pre-selects: annotators who can log in (a password, active), stand-ins left out.
    ``users``: annotator.accounts.auth.UserInfo rows."""
    return [u.name for u in users
            if u.role == "annotator" and u.can_log_in and u.active and u.name not in stand_ins()]



def team_frame(frame, team):
    """A judgement frame (annotator.store.analysis_queries) with only the annotations of ``team``; adjudications
    stay (they are a lead's decision, whoever disagreed). Read from the categorical codes, as annotators_in is."""
    import numpy as np
    import pandas as pd
    kind = pd.Categorical(frame["kind"])
    user = pd.Categorical(frame["user"])
    member = np.append(np.isin(np.asarray(user.categories, dtype=object), list(team)), False)  # code -1: nobody
    annotation = np.append(np.asarray(kind.categories, dtype=object) == "annotation", False)
    keep = ~annotation[kind.codes] | member[user.codes]
    return frame[keep]
