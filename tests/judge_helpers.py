"""A synthetic project whose truth is known, with annotators and judges of known quality (the judge tests share it).

``synthetic(store, tmp_path)`` stores project ``"synth"``: ``n`` items, two systems (``a``, ``b``), one caption
each, error types drawn at known rates (a rare one among them); annotator ``ann`` labels a random share of the
captions with the truth, ``ben`` labels the first 60 of system ``a`` with every fifth label flipped; and judges
written as judge files (k votes per caption, each vote right with the judge's accuracy) are imported through
``annotator.exchange.judge_files.import_judge``. The returned :class:`Synth` holds the truth and every judge's
outputs, so a test can compute the expected figures with an independent library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from annotator.exchange.judge_files import import_judge
from annotator.model import Caption, Item, Project, Reference, Role
from annotator.store.judgements import insert_judgement
from annotator.store.projects import load_project, write_project
from annotator.store.users import create_user

PROJECT = "synth"
#: type → its rate among captions (independent draws; a caption with any type is inaccurate)
RATES = {"gender": 0.2, "scene": 0.15, "color": 0.1, "number": 0.03}


@dataclass
class Synth:
    """What was stored: caption ids and truth per system, the labelled rows, the judges' outputs by caption id."""

    ids: dict[str, list[int]]
    truth: dict[str, list[tuple[str, ...]]]
    labelled: np.ndarray
    ben_rows: np.ndarray
    ben_labels: list[bool]
    judges: dict[str, dict[int, dict]] = field(default_factory=dict)

    def inaccurate(self, system: str) -> np.ndarray:
        return np.array([bool(t) for t in self.truth[system]])


def votes(rng, truth: bool, k: int, accuracy: float) -> float:
    """The share of k votes that say yes, each right with probability ``accuracy``."""
    right = rng.random(k) < accuracy
    return float(np.where(right, truth, not truth).mean())


def judge_rows(rng, synth: Synth, *, k: int, accuracy: float, types=tuple(RATES), skip: int = 0) -> list[dict]:
    """A judge's rows for every caption (but the first ``skip`` of system ``b``): p_inaccurate and the types'
    vote shares, each vote right with probability ``accuracy``."""
    rows = []
    for system, ids in synth.ids.items():
        for i, cid in enumerate(ids):
            if system == "b" and i < skip:
                continue
            truth = synth.truth[system][i]
            row = {"item": f"img{i}", "system": system, "p_inaccurate": votes(rng, bool(truth), k, accuracy)}
            if types:
                row["types"] = {t: votes(rng, t in truth, k, accuracy) for t in types}
            rows.append(row)
    return rows


def write_judge(path, name: str, rows: list[dict], *, k: int, model: str = "stand-in") -> None:
    header = {"format": "annotator-judge", "version": 1, "judge": name, "model": model, "prompt": "1", "k": k}
    path.write_text("\n".join(json.dumps(r) for r in [header, *rows]) + "\n", encoding="utf-8")


def synthetic(store, tmp_path, *, n: int = 300, seed: int = 0, share: float = 0.5,
              judges: dict | None = None) -> Synth:
    """Store the project and import ``judges`` (name → dict of judge_rows' options; default a good judge
    ``good`` (k 5, votes right 90 %) and a poor one ``poor`` (k 3, 65 %))."""
    rng = np.random.default_rng(seed)
    truth = {s: [tuple(t for t, r in RATES.items() if rng.random() < r) for _ in range(n)] for s in ("a", "b")}
    items = [Item(key=f"img{i}", references=[Reference(f"a reference of image {i}")],
                  captions=[Caption("a", f"caption {i} of system a"), Caption("b", f"caption {i} of system b")])
             for i in range(n)]
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, items=items))
        ann = create_user(conn, "ann", Role.ANNOTATOR)
        ben = create_user(conn, "ben", Role.ANNOTATOR)
    project = load_project(store, PROJECT)
    ids = {s: [c.caption_id for it in project.items for c in it.captions if c.system == s] for s in ("a", "b")}
    labelled = np.sort(rng.choice(n, int(share * n), replace=False))
    ben_rows = np.arange(60)
    ben_labels = [bool(truth["a"][r]) != (r % 5 == 0) for r in ben_rows]
    with store.transaction() as conn:
        for s in ("a", "b"):
            for r in labelled.tolist():
                t = truth[s][r]
                insert_judgement(conn, ids[s][r], ann, label="inaccurate" if t else "accurate", error_types=t)
        for r, inacc in zip(ben_rows.tolist(), ben_labels):
            types = (truth["a"][r] or ("other",)) if inacc else ()
            insert_judgement(conn, ids["a"][r], ben, label="inaccurate" if inacc else "accurate", error_types=types,
                             note="other" if "other" in types else "")
    synth = Synth(ids, truth, labelled, ben_rows, ben_labels)
    judges = judges if judges is not None else {"good": {"k": 5, "accuracy": 0.9}, "poor": {"k": 3, "accuracy": 0.65}}
    for j, (name, options) in enumerate(judges.items()):
        rows = judge_rows(np.random.default_rng(seed + 100 + j), synth, **options)
        path = tmp_path / f"{name}.jsonl"
        write_judge(path, name, rows, k=options["k"])
        import_judge(store, PROJECT, path)
        synth.judges[name] = {synth.ids[r["system"]][int(r["item"][3:])]: r for r in rows}
    return synth
