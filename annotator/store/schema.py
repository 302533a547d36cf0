"""The database schema (SQLAlchemy Core tables), the current version of it.

Migrations in :mod:`annotator.store.migrations` bring an older database up to
this shape. Timestamps are UTC. Judgements and corrections are append-only
revision tables; ``current_*`` tables point at the latest revision per key and
carry the fields analysis needs, so reading a million current judgements does
not have to group the history.
"""

from __future__ import annotations

import functools

from sqlalchemy import (
    BigInteger, Boolean, CheckConstraint, Column, DateTime, Float, ForeignKey, Index, Integer, MetaData, String, Table,
    Text, UniqueConstraint, false, true,
)

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("applied_at", DateTime(timezone=True), nullable=False),
)

projects = Table(
    "projects", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("image_root", Text),
    Column("description", Text, nullable=False, default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

items = Table(
    "items", metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(500), nullable=False),
    Column("position", Integer, nullable=False),
    Column("image_path", Text),
    Column("width", Integer),
    Column("height", Integer),
    Column("is_practice", Boolean, nullable=False, default=False),
    UniqueConstraint("project_id", "key", name="uq_items_project_key"),
    Index("ix_items_project_position", "project_id", "position"),
)

boxes = Table(
    "boxes", metadata,
    Column("id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    Column("box_key", String(100), nullable=False),
    Column("label", String(200), nullable=False),
    Column("synset", String(200)),
    Column("x", Float, nullable=False),
    Column("y", Float, nullable=False),
    Column("w", Float, nullable=False),
    Column("h", Float, nullable=False),
    UniqueConstraint("item_id", "box_key", name="uq_boxes_item_key"),
)

refs = Table(
    "refs", metadata,
    Column("id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("mentions", Text),  # JSON list of [start, end, [box ids], phrase type]
    Index("ix_refs_item", "item_id"),
)

systems = Table(
    "systems", metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    UniqueConstraint("project_id", "name", name="uq_systems_project_name"),
)

captions = Table(
    "captions", metadata,
    Column("id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    Column("system_id", Integer, ForeignKey("systems.id", ondelete="CASCADE"), nullable=False),
    # 0-based line in the system's captions file (of its sample n: each sample counts its own lines)
    Column("line_no", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("mentions", Text),
    # Added by migration 14: the sample (or beam) index of the caption among its system's descriptions of the
    # item, 0 for the first; one caption per (item, system, n) and per (system, n, line). Annotation works on
    # one of them (annotator.store.samples.annotated_sample), whose lines stay 0..N-1 whatever else is added.
    Column("n", Integer, nullable=False, server_default="0"),
    UniqueConstraint("item_id", "system_id", "n", name="uq_captions_item_system_n"),
    UniqueConstraint("system_id", "n", "line_no", name="uq_captions_system_sample_line"),
    CheckConstraint("n >= 0", name="ck_captions_n"),
)

users = Table(
    "users", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("role", String(20), nullable=False),
    Column("password_hash", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Added by migration 4 (which also moved the failure counters to login_failures):
    # the name as it is compared (store.users.user_name_key), unique, so "Alice" and "alice" are one account;
    Column("name_key", String(400), nullable=False, server_default=""),
    # a value that changes whenever the password, role or access changes: sessions remember it at log-in
    # and end when it differs (annotator.accounts.auth.resume_session);
    Column("session_epoch", BigInteger, nullable=False, server_default="0"),
    # False for a deactivated account: it cannot log in, its sessions end, its judgements stay.
    Column("active", Boolean, nullable=False, server_default=true()),
    # Added by migration 12: True for a password an admin generated (a new account, a reset); the log-in
    # then asks for a new password before the app opens (annotator.accounts.auth.change_own_password clears it).
    Column("must_change_password", Boolean, nullable=False, server_default=false()),
    # Added by migration 16: the account's e-mail address (None: none given), as stored by names.check_email,
    # and the form it is compared in (names.email_key), unique: Label Studio and other tools name people by it.
    Column("email", String(254)),
    Column("email_key", String(254)),
)

ix_users_name_key = Index("uq_users_name_key", users.c.name_key, unique=True)
ix_users_email_key = Index("uq_users_email_key", users.c.email_key, unique=True)

# Failed log-ins per typed name (its user_name_key), whether or not an account has that name, so that
# throttling and lock-out look the same for every name and hold across app processes; added by migration 4.
login_failures = Table(
    "login_failures", metadata,
    Column("name_key", String(400), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("last_failed_at", DateTime(timezone=True), nullable=False),
    Column("locked_until", DateTime(timezone=True)),
    Index("ix_login_failures_last", "last_failed_at"),
)

judgements = Table(
    "judgements", metadata,
    Column("id", Integer, primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("kind", String(20), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("label", String(20)),  # None: skipped
    Column("error_types", Text, nullable=False, default=""),  # space-separated ids, taxonomy order
    Column("note", Text, nullable=False, default=""),
    Column("seconds", Float, nullable=False, default=0.0),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Added by migration 13: the revision's error spans as JSON (annotator.spans.encode_spans), None without.
    Column("spans", Text),
    # Added by migration 19: True when the annotate panel opened pre-filled from a judge's suggestion
    # (annotator.judges.suggestions), False when it did not; None where nothing was recorded (imports, and
    # every revision saved before suggestions existed, when no panel was ever pre-filled).
    Column("suggested", Boolean),
    UniqueConstraint("caption_id", "user_id", "kind", "revision", name="uq_judgements_revision"),
)

current_judgements = Table(
    "current_judgements", metadata,
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), primary_key=True),
    Column("kind", String(20), primary_key=True),
    Column("judgement_id", Integer, ForeignKey("judgements.id"), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("label", String(20)),
    Column("error_types", Text, nullable=False, default=""),
    # The current revision's save time as whole microseconds since the epoch, UTC (annotator.store.save_times):
    # what the team dashboard reads for a million rows as integers. Migration 21 put it in place of a timestamp
    # column, updated_at.
    Column("saved_us", BigInteger, nullable=False),
    # Added by migration 9, so the dashboards read a million judgements as numbers, from this table alone:
    # the error types again as an integer (codec.type_mask; None where the text has no exact mask, and such
    # rows are read as text) and the revision's working time, which migration 21 turned into whole hundredths
    # plus one (codec.working_hundredths; 0 where the time is not one, and such rows read their revision's).
    Column("type_mask", BigInteger),
    Column("hundredths", Integer, nullable=False, default=0),
    Index("ix_current_judgements_user", "user_id", "kind"),
)

# Which keys changed since a judgement id (annotator.frames.live.LiveJudgementFrame); added by migration 3.
ix_current_judgements_judgement = Index("ix_current_judgements_judgement", current_judgements.c.judgement_id)



@functools.cache
def ix_items_practice() -> Index:
    """The practice items of a project (migration 11): every dashboard read and version check asks for them, and
    without it SQLite looked up every item of the project (50 ms on 250,000 items) to find a few hundred.
    Built on first use: its dialect options load SQLAlchemy's PostgreSQL dialect (0.1 s of CPU), which a command
    on a SQLite store does not otherwise need."""
    return Index("ix_items_practice", items.c.project_id, items.c.id,
                 sqlite_where=items.c.is_practice.is_(True), postgresql_where=items.c.is_practice.is_(True))


corrections = Table(
    "corrections", metadata,
    Column("id", Integer, primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), nullable=False),
    Column("error_type", String(50), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("original_text", Text, nullable=False),
    Column("corrected_text", Text),  # None: deliberately left untouched
    Column("override_reason", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # True: made in blind mode (references and live scores hidden until saved); False: with them shown;
    # None: not recorded (before migration 7, or saved outside the Correction page). Added by migration 7.
    Column("blind", Boolean),
    UniqueConstraint("caption_id", "error_type", "user_id", "revision", name="uq_corrections_revision"),
)

current_corrections = Table(
    "current_corrections", metadata,
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("error_type", String(50), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), primary_key=True),
    Column("correction_id", Integer, ForeignKey("corrections.id"), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

assignments = Table(
    "assignments", metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("is_second", Boolean, nullable=False, default=False),  # blind double annotation
    UniqueConstraint("caption_id", "user_id", name="uq_assignments_caption_user"),
    Index("ix_assignments_user_position", "user_id", "project_id", "position"),
)

# A round of the human sample of one system (assign --active/--random), added by migration 5: each caption
# taken, with its inclusion probability (1 for captions labelled before the draw), is a row of
# sample_draw_captions; the estimate weights its label by the inverse (annotator.estimate.ppi.draws_means).
sample_draws = Table(
    "sample_draws", metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("system_id", Integer, ForeignKey("systems.id", ondelete="CASCADE"), nullable=False),
    Column("number", Integer, nullable=False),  # 1, 2, ... per system: with the seed, it picks the draw's coins
    Column("design", String(20), nullable=False),  # active | uniform
    Column("size", Integer, nullable=False),  # expected number of new captions
    Column("seed", Integer, nullable=False),
    Column("layer", String(400), nullable=False),  # the judgements it learned from
    Column("targets", Text, nullable=False, default=""),  # space-separated targets it aimed at
    Column("floor", Float, nullable=False),
    Column("taken", Integer, nullable=False),  # captions not labelled before that it took
    Column("labelled_before", Integer, nullable=False),  # captions labelled before it (taken with probability 1)
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Added by migration 19: the judge whose scores an active draw aimed with ("detectors" or an imported or run
    # judge's name); None for uniform draws and for draws made before judges existed (the detectors then).
    Column("predictor", String(200)),
    UniqueConstraint("system_id", "number", name="uq_sample_draws_system_number"),
    Index("ix_sample_draws_project", "project_id"),
)

sample_draw_captions = Table(
    "sample_draw_captions", metadata,
    Column("draw_id", Integer, ForeignKey("sample_draws.id", ondelete="CASCADE"), primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("probability", Float, nullable=False),
)

human_scores = Table(
    "human_scores", metadata,
    Column("id", Integer, primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("value", Float, nullable=False),
    UniqueConstraint("caption_id", "name", name="uq_human_scores_caption_name"),
)

project_settings = Table(
    "project_settings", metadata,
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(100), primary_key=True),
    Column("value", Text, nullable=False),
)

# Log-in sessions behind the browser's session cookie (annotator.accounts.sessions); added by migration 6. The cookie's
# token is kept only as its SHA-256, so the table never holds a value a browser could present; the id is how
# the app's own tab refers to its session.
sessions = Table(
    "sessions", metadata,
    Column("id", String(64), primary_key=True),
    Column("token_hash", String(64), unique=True),  # None until the cookie route has set the cookie
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    # the account's session epoch at log-in: a new epoch (password, role, access changed) ends the session
    Column("epoch", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_seen_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),  # absolute end, whatever the activity
    # SHA-256 of the one-time code the page hands to the cookie route, until that route redeems it
    Column("handoff", String(64)),
    Column("handoff_expires_at", DateTime(timezone=True)),
    Index("ix_sessions_user", "user_id"),
    Index("ix_sessions_handoff", "handoff"),
    Index("ix_sessions_expires", "expires_at"),
)

# Per-user remembered choices (last project and page, team selections), key/value; added by migration 6.
user_settings = Table(
    "user_settings", metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(200), primary_key=True),
    Column("value", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Server-wide secrets shared by every app process on the database (the session cookie's signing key unless
# ANNOTATOR_SECRET_KEY is set); added by migration 6.
server_keys = Table(
    "server_keys", metadata,
    Column("name", String(100), primary_key=True),
    Column("value", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Every change to an account (created, role, password reset, unlock, deactivated/activated): who did it, when,
# what; added by migration 8. Names are kept as text so the record outlives a renamed or removed account.
account_changes = Table(
    "account_changes", metadata,
    Column("id", Integer, primary_key=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(100), nullable=False),
    Column("action", String(40), nullable=False),
    Column("target", String(100), nullable=False),
    Column("detail", Text, nullable=False, default=""),
    Index("ix_account_changes_at", "at"),
)

# The annotate panel as an annotator left it with "Save draft" (choice, ticked types, spans, note), one row per user
# and caption, so unfinished work outlives a reload, a move to another caption or a server restart; removed
# when that user saves or skips a judgement of the caption. Added by migration 10.
drafts = Table(
    "drafts", metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("label", String(20)),  # None: no choice made yet
    Column("error_types", Text, nullable=False, default=""),  # space-separated ids, taxonomy order
    Column("spans", Text),  # the draft's error spans as JSON (annotator.spans.encode_spans); NULL: none
    Column("note", Text, nullable=False, default=""),
    Column("saved_at", DateTime(timezone=True), nullable=False),
)


# AI judges of a project (annotator.judges), added by migration 17: one row per judge name, with its signature
# (JSON object: model, prompt version, k and any other setting, shown wherever its figures are) and where its
# outputs came from. Importing or running a judge of the same name replaces its outputs.
judges = Table(
    "judges", metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("signature", Text, nullable=False),
    Column("source", Text, nullable=False, default=""),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("project_id", "name", name="uq_judges_project_name"),
)

# What a judge said about one caption, apart from the human judgements: its probability that the caption is
# inaccurate, its error-type probabilities (JSON {type id: probability}; NULL: it gave none for this caption), its
# error spans (annotator.spans.encode_spans; NULL: none) and its raw replies (JSON list; NULL: none kept).
judge_outputs = Table(
    "judge_outputs", metadata,
    Column("judge_id", Integer, ForeignKey("judges.id", ondelete="CASCADE"), primary_key=True),
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("p_inaccurate", Float, nullable=False),
    Column("types", Text),
    Column("spans", Text),
    Column("answers", Text),
    Index("ix_judge_outputs_caption", "caption_id"),
)

# The answers of `annotator judge run`, one row per caption, model, prompt version, settings and sample, stored as
# each arrives (added by migration 18): a run stopped at any point (even by kill -9) resumes without asking the
# model again for what it has. ``text_hash`` is the SHA-256 of what the model was shown (caption and references):
# a caption whose text changed since is asked again.
judge_answers = Table(
    "judge_answers", metadata,
    Column("caption_id", Integer, ForeignKey("captions.id", ondelete="CASCADE"), primary_key=True),
    Column("model", String(200), primary_key=True),
    Column("prompt_version", String(100), primary_key=True),
    Column("settings", String(200), primary_key=True),
    Column("sample", Integer, primary_key=True),
    Column("text_hash", String(64), nullable=False),
    Column("answer", Text, nullable=False),  # the reply's text as the model gave it
    Column("parsed", Text, nullable=False),  # the answer it parsed to (JSON: inaccurate, types, spans)
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Each user's queue in a project counted as saves happen (added by migration 20; annotator.store.queue_tallies):
# so that resuming, the progress line and the caption list's counts read one row whatever the queue's length.
# assigned, seen (judged or skipped), labelled, inaccurate and noted (a note on the current revision) count the
# user's assignments by their own current annotation; second the blind second-annotator ones; waiting those of
# a staged second pass ready for their error types; unseen_from the lowest position not yet seen (NULL: none).
queue_tallies = Table(
    "queue_tallies", metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("assigned", Integer, nullable=False),
    Column("seen", Integer, nullable=False),
    Column("labelled", Integer, nullable=False),
    Column("inaccurate", Integer, nullable=False),
    Column("noted", Integer, nullable=False),
    Column("second", Integer, nullable=False),
    Column("waiting", Integer, nullable=False),
    Column("unseen_from", Integer),
)
