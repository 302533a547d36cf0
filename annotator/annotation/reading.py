"""Reading judgements outside one's own queue: annotators may read only their own."""

from __future__ import annotations

from ..accounts.access import REVIEW, require_role
from ..errors import PermissionDenied
from ..model import Judgement, Role


def judgements_of(store, actor: str, actor_role: Role | str, project: str, user: str | None = None):
    """Current judgements of a project as a DataFrame (see store.judgements.current_frame).

    An annotator may read only their own (``user`` must be themselves);
    leads, analysts and admins may read anyone's.
    """
    from ..store.judgements import current_frame
    if Role(actor_role) not in REVIEW:
        if user != actor:
            raise PermissionDenied("annotators can read only their own judgements")
    return current_frame(store, project, users_=[user] if user else None)


def judgement_history(store, actor: str, actor_role: Role | str, caption_id: int, user: str) -> list[Judgement]:
    """Every revision of ``user``'s judgement of a caption (annotators: only their own)."""
    from ..store.judgements import history
    from ..store.users import user_id
    if user != actor:
        require_role(actor_role, REVIEW, "reading another user's judgements")
    with store.read() as conn:
        return history(conn, caption_id, user_id(conn, user), "annotation")
