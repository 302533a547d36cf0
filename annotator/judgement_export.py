"""Every judgement of a project, one row per caption judgement: the report behind ``annotator judgements
export``, the Data page's judgements download and an annotator's own download.

    export = export_judgements(store, "flickr-val", annotators=["ali"], history=True)
    data = export.to_bytes("csv")        # or "xlsx", "jsonl"

Rows and columns are described in :mod:`annotator.io.judgement_rows`; the JSONL file reads back with
``annotator import jsonl`` into the same judgements. CSV and XLSX go through the table writers
(:mod:`annotator.io.tables`), which keep a caption or note from acting as a spreadsheet formula.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .accounts.access import REVIEW
from .errors import InputError, PermissionDenied
from .io.judgement_rows import COLUMNS, TYPE_SEPARATOR, format_saved_at, write_jsonl
from .model import Role
from .spans import decode_spans, encode_spans
from .taxonomy import taxonomy

#: The file formats of a judgements export.
EXPORT_FORMATS = ("csv", "jsonl", "xlsx")
_MIME = {"jsonl": "application/jsonl"}
#: How CSV and XLSX spell the ``suggested`` column (JSONL: true, false, null).
_SUGGESTED_TEXT = {True: "true", False: "false", None: ""}


@dataclass(frozen=True)
class JudgementExport:
    """The judgement rows of one project (``rows``: ``COLUMNS``, error types as tuples) and how they were chosen."""

    project: str
    rows: pd.DataFrame
    history: bool = False
    annotators: tuple[str, ...] | None = None
    layer: str | None = None
    system: str | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def table(self) -> pd.DataFrame:
        """The rows as a table for people: error types joined by ``;``, spans as JSON text (empty when none),
        ``suggested`` as ``true``, ``false`` or empty (not recorded)."""
        out = self.rows.copy()
        out["error_types"] = [TYPE_SEPARATOR.join(t) for t in out["error_types"]]
        out["spans"] = [encode_spans(s) or "" for s in out["spans"]]
        out["suggested"] = [_SUGGESTED_TEXT[s] for s in out["suggested"]]
        return out

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """One table, "Judgements" (for annotator.io.tables.write_table)."""
        return {"Judgements": self.table()}

    def to_bytes(self, fmt: str, *, raw_csv: bool = False) -> bytes:
        """The file in ``fmt`` (one of :data:`EXPORT_FORMATS`); ``raw_csv``: CSV cells exactly as stored."""
        if fmt == "jsonl":
            buf = io.StringIO()
            write_jsonl(self.rows.to_dict("records"), buf)
            return buf.getvalue().encode("utf-8")
        if fmt not in EXPORT_FORMATS:
            raise InputError(f"a judgements export is {', '.join(EXPORT_FORMATS)}, not {fmt!r}")
        from .io.tables import write_table
        return write_table(self.table(), fmt, name="Judgements", raw_csv=raw_csv)

    def file_name(self, fmt: str) -> str:
        """A file name for the download: ``<project>-judgements[-history].<ext>`` (unsafe characters replaced)."""
        from .io.tables import file_name
        stem = file_name(f"{self.project}-judgements" + ("-history" if self.history else ""), "csv")[:-len(".csv")]
        return f"{stem}.{fmt}"

    @staticmethod
    def mime_type(fmt: str) -> str:
        """The MIME type of ``fmt`` (for download buttons)."""
        from .io.tables import mime_type
        return _MIME.get(fmt) or mime_type(fmt)

    def summary(self) -> dict:
        """What the command line prints with ``--json`` besides the file."""
        return {"project": self.project, "rows": len(self), "history": self.history,
                "annotators": list(self.annotators) if self.annotators is not None else None,
                "layer": self.layer, "system": self.system}


def _allowed(actor: str | None, actor_role, annotators, layer) -> tuple[list[str] | None, object]:
    """Annotators read only their own judgements: the selection they may export (leads and analysts: any)."""
    if actor_role is None or Role(actor_role) in REVIEW:
        return annotators, layer
    from .layers import parse_layer
    from .store.users import user_name_key
    own = user_name_key(actor)
    if annotators is not None and any(user_name_key(a) != own for a in annotators):
        raise PermissionDenied("annotators can export only their own judgements")
    if layer is not None and (parse_layer(layer).kind != "annotator" or user_name_key(parse_layer(layer).user) != own):
        raise PermissionDenied("annotators can export only their own judgements")
    return [actor], None


def export_judgements(store, project: str, *, annotators=None, layer=None, system: str | None = None,
                      history: bool = False, actor: str | None = None, actor_role: Role | str | None = None
                      ) -> JudgementExport:
    """The judgement rows of ``project``: every current judgement (skips included), or with ``history`` every
    revision, in project order.

    ``annotators`` keeps those users' rows; ``layer`` (see :mod:`annotator.layers`) keeps the judgements
    a layer's decisions rest on (:func:`annotator.layers.layer_judgement_ids`; with ``history``, every
    revision of them); ``system`` keeps one system's captions. ``actor``/``actor_role``: who asks (the
    command line asks as nobody in particular); an annotator gets only their own rows.
    """
    from .layers import layer_judgement_ids, parse_layer
    from .store.exchange import judgement_records
    from .store.projects import project_id, system_id
    from .store.users import get_user, user_name_key
    annotators = None if annotators is None else [str(a) for a in annotators] or None
    annotators, layer = _allowed(actor, actor_role, annotators, layer)
    layer = None if layer is None else parse_layer(layer)
    with store.read() as conn:
        pid = project_id(conn, project)
        if system is not None:
            system_id(conn, pid, system)
        names = [get_user(conn, a).name for a in annotators] if annotators is not None else None
        if layer is not None and layer.kind == "annotator":
            get_user(conn, layer.user)
        keys = [user_name_key(n) for n in names] if names is not None else None
        rows = judgement_records(conn, pid, history=history, user_keys=keys, system=system)
        current = judgement_records(conn, pid, user_keys=keys, system=system) if layer is not None and history else rows
    if layer is not None:
        from .store.analysis_queries import judgement_frame
        frame = judgement_frame(store, project, kinds=("annotation", "adjudication"), system=system)
        chosen = set(layer_judgement_ids(frame, layer, system=system).tolist())
        wanted = {(r.caption_id, r.user_id, r.kind) for r in current if r.id in chosen}
        rows = [r for r in rows if (r.caption_id, r.user_id, r.kind) in wanted]
    tax = taxonomy()
    table = pd.DataFrame({
        "project": [project] * len(rows),
        "system": [r.system for r in rows], "item": [r.item for r in rows],
        "line": np.array([r.line for r in rows], dtype=np.int64), "caption": [r.caption for r in rows],
        "annotator": [r.annotator for r in rows], "kind": [r.kind for r in rows],
        "label": pd.Series([r.label for r in rows], dtype=object),  # None (a skip) stays None
        "error_types": [tax.in_order(r.error_types.split()) for r in rows],
        "spans": [decode_spans(r.spans) for r in rows],
        "note": [r.note or "" for r in rows], "seconds": np.array([r.seconds or 0.0 for r in rows], dtype=float),
        "revision": np.array([r.revision for r in rows], dtype=np.int64),
        "saved_at": [format_saved_at(r.saved_at) for r in rows],
        # Whether a judge's suggestion pre-filled the panel (None: not recorded, as for imports).
        "suggested": pd.Series([None if r.suggested is None else bool(r.suggested) for r in rows], dtype=object)},
        columns=list(COLUMNS))
    return JudgementExport(project, table, bool(history), tuple(names) if names is not None else None,
                           layer.label if layer is not None else None, system)


def own_judgements(store, user: str, role: Role | str, project: str, *, history: bool = True) -> JudgementExport:
    """What the Annotate page offers an annotator: their own judgements of ``project`` (every revision by default)."""
    return export_judgements(store, project, annotators=[user], history=history, actor=user, actor_role=role)
