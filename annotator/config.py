"""One Settings object, read from the environment.

``ANNOTATOR_DATABASE_URL``  SQLAlchemy URL; default: SQLite file data/annotator.db
``ANNOTATOR_DATA_DIR``      where the SQLite file and backups live (default: data/)
``ANNOTATOR_SAMPLE``        set to 0 to skip loading the sample project on first start
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


def sqlite_url(path: Path | str) -> str:
    """SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


def load_settings(environ: dict | None = None) -> Settings:
    """Build the settings from ``environ`` (default: os.environ)."""
    env = os.environ if environ is None else environ
    data_dir = Path(env.get("ANNOTATOR_DATA_DIR") or DEFAULT_DATA_DIR)
    url = env.get("ANNOTATOR_DATABASE_URL") or sqlite_url(data_dir / "annotator.db")
    load_sample = env.get("ANNOTATOR_SAMPLE", "1") not in ("0", "false", "no")
    return Settings(database_url=url, data_dir=data_dir, load_sample=load_sample)
