"""Streamlit glue shared by the app and its pages (the only part of the core that imports streamlit).

Contract every page follows (tests/ui/test_page_convention.py checks it)::

    from annotator import ui
    from annotator.ui import agreement
    ctx = ui.page_setup("agreement")   # login + role guard; st.stop() on refusal
    agreement.render(ctx)              # annotator/ui/agreement/ draws it from ctx.store, ctx.user, ctx.project

A render function usually starts with ``project = ui.page_header(ctx)``: the title, what the page shows
(annotator/ui/pages.toml) and the selected project.

One package per screen (annotator/ui/<page id>/: page.py with ``render``, the screen's other modules, its scripts
and styles beside them); what several screens share lives in shell/ (page guard, header, sidebar: frame.py; what
several pages read alike: page_data.py), session/ (identity, state, caches, the session cookie) and widgets/
(text, formatting, palette, figure, …). This package's face is the names below, each from the module that holds it.

Session keys: ``ui.USER_KEY`` holds the logged-in user as a dict
``{"name", "role"}``; ``ui.PROJECT_KEY`` the selected project name.
"""

from __future__ import annotations

from .session import cookie as session_cookie  # noqa: F401
from .session.caches import cached_layer, frame_snapshots, get_store, live_judgements, store_for  # noqa: F401
from .session.identity import (  # noqa: F401
    FIRST_ADMIN_COMMAND, SessionUser, client_address, current_user, end_session, first_admin_notice, local_mode,
    local_mode_banner, log_out, no_accounts, request_is_local, server_port, signed_in,
)
from .session.state import (  # noqa: F401
    LOCAL_MODE_KEY, LOCAL_USER, PROJECT_KEY, PROJECT_NAMES_KEY, SESSION_ENDED_KEY, USER_KEY, log_in, outage_notice,
    project_names, remembered,
)
from .shell.frame import (  # noqa: F401
    PROGRESS_KEY, PROGRESS_MAX_AGE, PageContext, allowed_pages_links, compact_header, ensure_shell, menu_pages,
    page_header, page_setup, page_texts, page_title, progress, project_picker, remember_progress, require_project,
    selected_project, shell_run, sidebar,
)
from .shell.page_data import (  # noqa: F401
    case_picture, judgement_layer, project_judgements, project_systems, refusal_text, show_error_and_stop,
)
from .widgets.formatting import show_table  # noqa: F401
from .widgets.text import WORD_JOINER, md_escape  # noqa: F401
