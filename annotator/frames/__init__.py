"""The dashboards' judgement frames: how a dashboard gets its frame.

A dashboard page asks :func:`~annotator.frames.shared.dashboard_frame` (Agreement, Adjudication, Error analysis)
or :func:`~annotator.frames.shared.team_live_frame` (Team) for the project's frame and calls ``.get()``: that is
the process's one :class:`~annotator.frames.live.LiveJudgementFrame` per project, read once from the store
(:func:`annotator.store.analysis_queries.judgement_frame`) and then brought up to date by reading only what was
saved since, as the store's versions say (:mod:`annotator.store.frame_versions`: ``data_version``,
``assignment_version``, the snapshot ``fingerprint``). Each full read is kept on disk
(:mod:`~annotator.frames.snapshots`), so a restarted server starts from the file instead of a million rows, and
:mod:`~annotator.frames.warm` reads the busiest projects' frames in the background as the server starts. The Team
page's assignments come the same way (:mod:`~annotator.frames.assignments`). Nothing here speaks SQL.
"""
