"""The bundled sample project (``data/sample/``), loaded on first start.

Eight photographs that scikit-image and scikit-learn ship, with hand-drawn
gold boxes, five hand-written references each, captions from two made-up
systems whose mistakes cover all 20 error types (the answer key is in
``data/sample/README.md`` and ``answer_key.json``), and example judgements by
two demo annotators so the agreement pages have something to show, and an example AI judge (``judge.jsonl``,
written by hand) so the Judges page does too.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.exc import IntegrityError

from .config import SAMPLE_DIR
from .store import Store

SAMPLE_PROJECT = "sample"
SAMPLE_SYSTEMS = ("sat-attn", "nic-beam")
DEMO_ANNOTATORS = ("sample-ann", "sample-ben")


def sample_enabled(environ=None) -> bool:
    """False when ``ANNOTATOR_SAMPLE`` is set to 0 (or false/no)."""
    env = os.environ if environ is None else environ
    return env.get("ANNOTATOR_SAMPLE", "1").strip().lower() not in ("0", "false", "no")


def answer_key(sample_dir: Path | str = SAMPLE_DIR) -> dict[str, dict[int, tuple[str, ...]]]:
    """system → caption line → the error type ids the sample caption was written to show (empty: accurate)."""
    from .io.textfiles import read_json
    raw = read_json(Path(sample_dir) / "answer_key.json")
    return {system: {int(i): tuple(types) for i, types in lines.items()} for system, lines in raw.items()}


def load_sample(store: Store, *, project: str = SAMPLE_PROJECT, sample_dir: Path | str = SAMPLE_DIR,
                with_judgements: bool = True) -> bool:
    """Load the sample into ``project`` in one transaction; False if a project exists already.

    Everything is read and checked before the transaction opens. Two processes
    starting at once cannot both load it: the check runs inside the write
    transaction and a lost race on the project name is reported as False.
    """
    from .io.jsonl import write_jsonl_project
    from .io.importers import in_batches
    from .io.judgements import BATCH
    from .store.legacy_judgements import write_legacy_judgements
    from .io.jsonl import read_jsonl_project
    from .io.judgements import read_legacy_judgements
    from .store.exchange import has_projects

    sample_dir = Path(sample_dir)
    data = read_jsonl_project(project, sample_dir / "sample.jsonl")
    # Keep the bundled images findable when the checkout moves: store the root
    # relative to the installation (resolve_image_path anchors relative roots there).
    data.project.image_root = _relative_to_install(data.project.image_root)
    judgement_sets = []
    if with_judgements:
        for annotator in DEMO_ANNOTATORS:
            for system in SAMPLE_SYSTEMS:
                base = sample_dir / "judgements" / annotator
                coarse, fine = base / f"{system}.coarse.json", base / f"{system}.fine.json"
                if coarse.is_file():
                    judgement_sets.append((annotator, system, str(coarse),
                                           read_legacy_judgements(coarse, fine if fine.is_file() else None)))
    judge = None
    if with_judgements and (sample_dir / "judge.jsonl").is_file():
        from .exchange.judge_files import read_judge_file
        judge = read_judge_file(sample_dir / "judge.jsonl")
    try:
        with store.transaction() as conn:
            if has_projects(conn):
                return False
            write_jsonl_project(conn, data, source=str(sample_dir / "sample.jsonl"))
            for annotator, system, source, judgements in judgement_sets:
                write_legacy_judgements(conn, project, system, annotator, in_batches(judgements, BATCH), source=source)
            if judge is not None:
                _store_judge(conn, project, judge)
    except IntegrityError:
        return False
    return True


def _store_judge(conn, project: str, judge) -> None:
    from .exchange.judge_files import resolve_rows
    from .store.judges import replace_judge
    from .store.projects import project_id
    pid = project_id(conn, project)
    outputs = resolve_rows(conn, pid, judge)
    replace_judge(conn, pid, judge.name, judge.signature, "judge.jsonl", [o.row() for o in outputs])


def _relative_to_install(root: str | None) -> str | None:
    from .config import REPO_ROOT
    if root is None:
        return None
    try:
        return Path(root).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return root


def ensure_sample(store: Store, environ=None, *, assign_to: str | None = None) -> bool:
    """Load the sample project if the store has no project and ANNOTATOR_SAMPLE is not "0"; True if loaded.

    ``assign_to`` (the local admin of a first start, where nobody has an account yet) is given every caption
    of the sample when it is loaded, so Annotate opens on work, not on "Nothing in this project is assigned
    yet". The app shell calls this once per start; it is cheap when a project exists.
    """
    if not sample_enabled(environ):
        return False
    from .store.exchange import has_projects
    with store.read() as conn:
        if has_projects(conn):
            return False
    loaded = load_sample(store)
    if loaded and assign_to:
        from .assignment import assign_to_self
        from .model import Role
        assign_to_self(store, SAMPLE_PROJECT, assign_to, Role.ADMIN)
    return loaded
