"""One Settings object, read from the environment.

``ANNOTATOR_DATABASE_URL``  SQLAlchemy URL; default: SQLite file data/annotator.db
``ANNOTATOR_DATA_DIR``      where the SQLite file and backups live (default: data/)
``ANNOTATOR_SAMPLE``        set to 0 to skip loading the sample project on first start
``ANNOTATOR_IMAGE_ROOTS``   folders (separated by os.pathsep, ``:`` on Linux) that projects' image roots
                            must lie in; unset: the data directory, plus per project the folder its
                            command-line import named (see annotator.images.check_image_root)
``ANNOTATOR_SESSION_IDLE_MINUTES``  a log-in session ends after this long without use (default 480: 8 hours)
``ANNOTATOR_SESSION_MAX_HOURS``     and this long after the log-in, whatever the use (default 24)
``ANNOTATOR_SECRET_KEY``    signs session cookies; unset: a random key kept in the database, shared by every
                            app process on it (see annotator.accounts.sessions)
``ANNOTATOR_FRAME_CACHE``   folder for the dashboards' judgement snapshots, so a restarted server opens them
                            fast (annotator.frames.snapshots); default <data dir>/cache/frames, ``off``
                            for none

The switches of the background start-up tasks (``ANNOTATOR_PRELOAD``, ``ANNOTATOR_WARM_DASHBOARDS``,
``ANNOTATOR_WARM_METRICS``) are declared with their tasks, in annotator.startup.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO_ROOT / "data"
SAMPLE_DIR = DEFAULT_DATA_DIR / "sample"


@dataclass(frozen=True)
class Settings:
    """Runtime settings of one process."""

    database_url: str
    data_dir: Path
    load_sample: bool
    image_roots: tuple[Path, ...] | None = None  # None: not configured (the default policy applies)
    session_idle_minutes: float = 480.0
    session_max_hours: float = 24.0
    secret_key: str | None = None
    frame_cache: Path | None = None  # None: the dashboards keep no judgement snapshots on disk


def sqlite_url(path: Path | str) -> str:
    """SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


def database_url(value: str) -> str:
    """A database URL as ``--db`` or ANNOTATOR_DATABASE_URL give it: a URL (``sqlite:///x.db``,
    ``postgresql+psycopg://…``) as it is, and a plain path (no ``://``) as a SQLite file there, relative to
    the working directory."""
    return value if "://" in value else sqlite_url(Path(value).expanduser())


def load_settings(environ: dict | None = None) -> Settings:
    """Build the settings from ``environ`` (default: os.environ)."""
    env = os.environ if environ is None else environ
    data_dir = Path(env.get("ANNOTATOR_DATA_DIR") or DEFAULT_DATA_DIR)
    raw_url = env.get("ANNOTATOR_DATABASE_URL")
    url = database_url(raw_url) if raw_url else sqlite_url(data_dir / "annotator.db")
    load_sample = env.get("ANNOTATOR_SAMPLE", "1") not in ("0", "false", "no")
    roots = [part.strip() for part in (env.get("ANNOTATOR_IMAGE_ROOTS") or "").split(os.pathsep) if part.strip()]
    # Relative entries are taken from the installation directory, like relative image roots.
    image_roots = tuple(Path(r) if Path(r).is_absolute() else REPO_ROOT / r for r in roots) or None
    return Settings(database_url=url, data_dir=data_dir, load_sample=load_sample, image_roots=image_roots,
                    session_idle_minutes=_positive(env, "ANNOTATOR_SESSION_IDLE_MINUTES", 480.0),
                    session_max_hours=_positive(env, "ANNOTATOR_SESSION_MAX_HOURS", 24.0),
                    secret_key=env.get("ANNOTATOR_SECRET_KEY") or None,
                    frame_cache=_frame_cache(env.get("ANNOTATOR_FRAME_CACHE"), data_dir))


def _frame_cache(raw: str | None, data_dir: Path) -> Path | None:
    if raw is None or not raw.strip():
        return data_dir / "cache" / "frames"
    if raw.strip().lower() in ("off", "0", "false", "no", "none"):
        return None
    return Path(raw.strip())


def _positive(env, name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        from .errors import InputError
        raise InputError(f"{name} must be a positive number, not {raw!r}")
    return value
