"""The team dashboard: who has done how much, how fast, what waits for the fine pass, and agreement so far.

One :class:`TeamReport` (built by :func:`team_report`) is what the Team page
shows and ``annotator team`` prints. It is computed from two frames:

* the project's current annotations with skips kept and their timing
  (annotator.store.analysis_queries.judgement_frame with ``include_skipped``
  and ``with_timing``, brought up to date by annotator.frames.live.team_frame, so a
  refresh reads only what was saved since);
* the project's assignments (annotator.frames.assignments.assignment_frame).

Per annotator (everyone with an assignment or an annotation in the project):

* **assigned** — assignment rows (captions in their queue);
* **done** — assigned captions they gave a label, less those waiting for the
  fine pass (the same count as the Annotate page's progress bar);
* **skipped** — assigned captions whose current judgement is a skip;
* **fine pass pending** — double-annotated captions where they are the second
  annotator, both said inaccurate, and they have not given error types yet;
* **not started** — assigned − done − skipped − fine pass pending;
* **median seconds** — median working time of their labelled captions that
  have one (the current revision's seconds; imported judgements without a
  time are left out, and so is a time above a day, annotator.limits.MAX_SECONDS,
  which no path stores any more but an older store may hold), **captions per
  hour** — those captions over the sum of their seconds;
* **last active** — the newest save of any of their judgements, UTC.

Progress over time counts, per UTC day, the assigned captions whose current
label was saved that day (a caption judged again counts on its newest day).
Agreement so far is annotator.agreement on the captions two annotators share
(practice items left out): per pair the captions, observed agreement and
Cohen's kappa with its bootstrap interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from .agreement import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, agreement_report
from .frames.assignments import assignment_frame
from .frames.live import team_frame
from .limits import MAX_SECONDS
from .model import JudgementKind, Label

__all__ = ["TeamAgreement", "TeamCounts", "TeamReport", "team_agreement", "team_counts", "team_report",
           "ANNOTATOR_COLUMNS"]

ANNOTATOR_COLUMNS = ["annotator", "assigned", "done", "skipped", "fine pass pending", "not started",
                     "median seconds", "captions per hour", "last active (UTC)"]
AGREEMENT_COLUMNS = ["annotator A", "annotator B", "shared captions", "observed agreement", "kappa",
                     "kappa low", "kappa high"]
PROGRESS_COLUMNS = ["day", "annotator", "judged", "cumulative"]


def _iso(epoch: float | None) -> str | None:
    if epoch is None or not np.isfinite(epoch):
        return None
    return datetime.fromtimestamp(float(epoch), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _totals(annotators: pd.DataFrame) -> dict:
    return {c: int(annotators[c].sum()) for c in ["assigned", "done", "skipped", "fine pass pending", "not started"]}


def _used_names(users: pd.Categorical) -> set[str]:
    codes = np.asarray(users.codes)
    used = np.bincount(codes[codes >= 0], minlength=len(users.categories)) > 0  # (linear, unlike np.unique)
    return {str(u) for u in users.categories[used]}


@dataclass(frozen=True)
class TeamReport:
    """Every figure of the team dashboard for one project (see the module docstring for definitions)."""

    project: str
    annotators: pd.DataFrame   # ANNOTATOR_COLUMNS, one row per annotator, by name
    progress: pd.DataFrame     # PROGRESS_COLUMNS, one row per (day, annotator) with a save that day
    agreement: pd.DataFrame    # AGREEMENT_COLUMNS, one row per pair sharing at least one caption
    confidence: float
    n_resamples: int
    seed: int
    alpha: float | None        # Krippendorff's alpha over every annotator (None with fewer than two)
    alpha_units: int

    @property
    def totals(self) -> dict:
        """The team's sums: assigned, done, skipped, fine pass pending, not started."""
        return _totals(self.annotators)

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """The report as named tables (CSV/XLSX/LaTeX exports, one file or sheet each)."""
        return {"Annotators": self.annotators, "Progress by day": self.progress, "Agreement so far": self.agreement}

    def summary(self) -> dict:
        """JSON-ready figures (what ``annotator team --json`` prints); missing values are null."""
        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                    for r in frame.astype(object).where(frame.notna(), None).to_dict(orient="records")]
        return {"project": self.project, "totals": self.totals, "annotators": records(self.annotators),
                "progress": records(self.progress), "agreement": records(self.agreement),
                "agreement_interval": {"confidence": self.confidence, "n_resamples": self.n_resamples,
                                       "seed": self.seed, "method": "percentile bootstrap over captions"},
                "alpha": self.alpha, "alpha_units": self.alpha_units}


@dataclass(frozen=True)
class TeamCounts:
    """The counting half of a :class:`TeamReport` (per annotator, progress by day): what the Team page shows
    first, before the agreement half's bootstrap is done."""

    project: str
    annotators: pd.DataFrame
    progress: pd.DataFrame

    @property
    def totals(self) -> dict:
        """The team's sums: assigned, done, skipped, fine pass pending, not started."""
        return _totals(self.annotators)


@dataclass(frozen=True)
class TeamAgreement:
    """The agreement half of a :class:`TeamReport`: per pair of annotators, and Krippendorff's alpha."""

    agreement: pd.DataFrame
    confidence: float
    n_resamples: int
    seed: int
    alpha: float | None
    alpha_units: int


def _annotations(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[np.asarray(frame["kind"] == JudgementKind.ANNOTATION.value, bool)] if len(frame) else frame


def team_report(project: str, frame: pd.DataFrame, assignments: pd.DataFrame, *,
                confidence: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
                seed: int = DEFAULT_SEED) -> TeamReport:
    """Build the :class:`TeamReport` of ``project``: :func:`team_counts` and :func:`team_agreement` together.

    ``frame``: current judgements (annotations; other kinds are ignored) with
    skips kept and the ``seconds`` and ``saved_at`` columns; ``assignments``:
    caption_id, user, is_second, is_practice per assignment row.
    """
    return combine(team_counts(project, frame, assignments),
                   team_agreement(frame, confidence=confidence, n_resamples=n_resamples, seed=seed))


def combine(counts: TeamCounts, agreement: TeamAgreement) -> TeamReport:
    """The :class:`TeamReport` made of its two halves."""
    return TeamReport(counts.project, counts.annotators, counts.progress, agreement.agreement, agreement.confidence,
                      agreement.n_resamples, agreement.seed, agreement.alpha, agreement.alpha_units)


#: Columns of :func:`recent_activity`.
RECENT_COLUMNS = ["annotator", "judged in the last hour", "active in the last 10 minutes"]
ACTIVE_WINDOW_S = 600.0  # "active": a save within the last ten minutes


def recent_activity(frame: pd.DataFrame, now: float) -> pd.DataFrame:
    """Progress within the day, at ``now`` (seconds since the epoch, UTC): per annotator with a save in the last
    hour, how many captions they judged in that hour (current judgements with a label, saved after ``now`` − 1 h)
    and whether they saved anything in the last ten minutes. Cheap (one pass over the save times), so a page
    recomputes it on every refresh while the counts stay cached."""
    ann = _annotations(frame)
    if not len(ann):
        return pd.DataFrame(columns=RECENT_COLUMNS)
    saved = ann["saved_at"].to_numpy(np.float64)
    labelled = np.asarray(ann["label"].array.codes) >= 0
    users = np.asarray(ann["user"].astype(str), dtype=object)
    hour = (saved >= now - 3600.0) & (saved <= now)
    rows = []
    for name in sorted(set(users[hour].tolist())):
        mine = users == name
        rows.append({"annotator": name, "judged in the last hour": int((mine & hour & labelled).sum()),
                     "active in the last 10 minutes": bool((mine & hour & (saved >= now - ACTIVE_WINDOW_S)).any())})
    return pd.DataFrame(rows, columns=RECENT_COLUMNS)


def team_counts(project: str, frame: pd.DataFrame, assignments: pd.DataFrame) -> TeamCounts:
    """Per annotator and per day figures of ``project`` (arguments as for :func:`team_report`)."""
    ann = _annotations(frame)
    # Users as integer codes over one list of names; (caption, user) pairs as one int64 key each, so the
    # judgements of the assigned captions are found by a sorted search instead of a merge of text columns.
    j_users = pd.Categorical(ann["user"]) if len(ann) else pd.Categorical([])
    a_users = pd.Categorical(assignments["user"]) if len(assignments) else pd.Categorical([])
    names = sorted(_used_names(j_users) | _used_names(a_users))
    index = pd.Index(names, dtype=object)
    k = max(len(names), 1)
    j_user = index.get_indexer(np.asarray(j_users.categories, dtype=object))[np.asarray(j_users.codes)] \
        if len(ann) else np.array([], np.int64)
    a_user = index.get_indexer(np.asarray(a_users.categories, dtype=object))[np.asarray(a_users.codes)] \
        if len(assignments) else np.array([], np.int64)
    j_cap = ann["caption_id"].to_numpy(np.int64)
    a_cap = assignments["caption_id"].to_numpy(np.int64)
    label_codes = np.asarray(ann["label"].array.codes) if len(ann) else np.array([], np.int8)
    j_lab = label_codes >= 0
    j_inacc = np.asarray(ann["label"] == Label.INACCURATE.value, bool)
    types = ann["error_types"].array if len(ann) else pd.Categorical([])
    typed_cat = np.asarray([str(t) != "" for t in types.categories], bool)
    j_typed = typed_cat[np.asarray(types.codes)] & (np.asarray(types.codes) >= 0) if len(ann) else np.array([], bool)
    j_secs = ann["seconds"].to_numpy(np.float64) if len(ann) else np.array([], np.float64)
    j_saved = ann["saved_at"].to_numpy(np.float64) if len(ann) else np.array([], np.float64)

    j_key = j_cap * k + j_user
    lookup = _key_lookup(j_key, len(a_cap))

    row = lookup(a_cap * k + a_user)
    has = row >= 0
    labelled = _at(j_lab, row)
    skipped = has & ~labelled
    a_second = assignments["is_second"].to_numpy(bool)
    a_practice = assignments["is_practice"].to_numpy(bool)

    # The fine pass: the second annotator's coarse "inaccurate" without types, the first annotator's "inaccurate".
    first_row = lookup(a_cap[~a_second] * k + a_user[~a_second])
    # Captions whose first annotator said inaccurate, as a table over caption ids (linear, unlike a set look-up).
    first_inacc = np.zeros(int(a_cap.max()) + 1 if len(a_cap) else 0, bool)
    first_inacc[a_cap[~a_second][_at(j_inacc, first_row)]] = True
    waiting = (a_second & ~a_practice & labelled & _at(j_inacc, row) & ~_at(j_typed, row)
               & (first_inacc[a_cap] if len(a_cap) else np.zeros(0, bool)))

    def per_user(mask: np.ndarray, users: np.ndarray) -> np.ndarray:
        return np.bincount(users[mask], minlength=k)

    everyone = np.ones(len(a_cap), bool)
    assigned_n, labelled_n = per_user(everyone, a_user), per_user(labelled, a_user)
    skipped_n, waiting_n = per_user(skipped, a_user), per_user(waiting, a_user)
    annotators = pd.DataFrame({
        "annotator": names,
        "assigned": assigned_n[:len(names)].astype(int), "done": (labelled_n - waiting_n)[:len(names)].astype(int),
        "skipped": skipped_n[:len(names)].astype(int), "fine pass pending": waiting_n[:len(names)].astype(int),
        "not started": (assigned_n - labelled_n - skipped_n)[:len(names)].astype(int),
        **_speed(j_user, j_lab, j_secs, j_saved, names),
    }, columns=ANNOTATOR_COLUMNS)

    progress = _daily_progress(j_saved[row[labelled]] if labelled.any() else np.array([], np.float64),
                               a_user[labelled], names)

    return TeamCounts(project, annotators, progress)


def _speed(j_user: np.ndarray, labelled: np.ndarray, seconds: np.ndarray, saved: np.ndarray,
           names: list[str]) -> dict:
    """The speed columns of the annotator table from the judgements (their annotators as positions in ``names``,
    whether each is labelled, its working time and save time): median seconds and captions per hour over the
    labelled judgements with a time, and the last save."""
    k = max(len(names), 1)
    timed = labelled & (seconds > 0) & (seconds <= MAX_SECONDS)
    timed_n = np.bincount(j_user[timed], minlength=k)
    # Exactly rounded sums (math.fsum): the figure does not depend on the order the judgements were read in.
    by_user = np.argsort(j_user[timed], kind="stable")
    bounds = np.searchsorted(j_user[timed][by_user], np.arange(k + 1))
    secs = seconds[timed][by_user]
    timed_sum = np.array([math.fsum(secs[bounds[i]:bounds[i + 1]].tolist()) for i in range(k)])
    # Each annotator's seconds are one slice of ``secs``: a median per slice (as pandas' groupby median).
    medians = {i: float(np.median(secs[bounds[i]:bounds[i + 1]])) for i in range(k) if bounds[i + 1] > bounds[i]}
    last = np.full(k, -np.inf)
    if len(saved):
        np.maximum.at(last, j_user, saved)
    # Missing figures are NaN (an empty cell on the page, null in JSON), never a "None" cell.
    return {"median seconds": [medians.get(i, np.nan) for i in range(len(names))],
            "captions per hour": [float(timed_n[i] / timed_sum[i] * 3600.0) if timed_n[i] else np.nan
                                  for i in range(len(names))],
            "last active (UTC)": [_iso(last[i]) if np.isfinite(last[i]) else None for i in range(len(names))]}


def _daily_progress(saved: np.ndarray, users_l: np.ndarray, names: list[str]) -> pd.DataFrame:
    """The progress table: assigned captions judged per UTC day and annotator, with each annotator's running total.
    ``saved`` holds the save times (epoch seconds) of the labelled assigned captions, ``users_l`` their annotators
    as positions in ``names``."""
    k = max(len(names), 1)
    # Whole days since the epoch, formatted once per distinct day.
    day_no = np.floor(saved / 86400.0).astype(np.int64)
    if len(day_no):
        # (day, annotator) pairs counted over the few days there are, instead of sorting a million keys.
        first_day = int(day_no.min())
        if (int(day_no.max()) - first_day + 1) * k <= 4 * len(day_no) + 1_000_000:
            per_pair = np.bincount((day_no - first_day) * k + users_l)
            pair = np.flatnonzero(per_pair)
            counts = per_pair[pair]
            pair = pair + first_day * k
        else:  # save times spread over ages (an import's odd dates): count the distinct pairs instead
            pair, counts = np.unique(day_no * k + users_l, return_counts=True)
        days, who = pair // k, pair % k
        daily = (pd.DataFrame({"day": days, "annotator": who, "judged": counts.astype(int)})
                 .sort_values(["annotator", "day"]))
        daily["cumulative"] = daily.groupby("annotator")["judged"].cumsum()
        daily = daily.sort_values(["day", "annotator"]).reset_index(drop=True)
        labels = {d: datetime.fromtimestamp(int(d) * 86400, tz=timezone.utc).strftime("%Y-%m-%d")
                  for d in np.unique(days).tolist()}
        daily["day"] = [labels[d] for d in daily["day"].tolist()]
        daily["annotator"] = [names[i] for i in daily["annotator"].tolist()]
        return daily[PROGRESS_COLUMNS]
    return pd.DataFrame(columns=PROGRESS_COLUMNS)


def _at(flags: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``flags[rows]`` where a row was found (``rows`` ≥ 0), False where not (-1); ``flags`` may be empty, as it is
    for a project whose assigned captions nobody has judged yet."""
    out = np.zeros(len(rows), bool)
    found = rows >= 0
    out[found] = flags[rows[found]]
    return out


def _key_lookup(keys: np.ndarray, n_queries: int):
    """A function giving, for each of an array of keys, the position in ``keys`` (unique, non-negative
    int64) that holds it, or -1. A table indexed by key where the keys are dense enough (one look-up a key),
    else a sorted search."""
    if not len(keys):
        return lambda wanted: np.full(len(wanted), -1, np.int64)
    top = int(keys.max())
    if top < 4 * (len(keys) + n_queries) + 1_000_000:
        table = np.full(top + 1, -1, np.int64)
        table[keys] = np.arange(len(keys), dtype=np.int64)

        def by_table(wanted: np.ndarray) -> np.ndarray:
            inside = wanted <= top
            return np.where(inside, table[np.where(inside, wanted, 0)], -1)
        return by_table
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]

    def by_search(wanted: np.ndarray) -> np.ndarray:
        pos = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
        return np.where(sorted_keys[pos] == wanted, order[pos], -1)
    return by_search


def team_agreement(frame: pd.DataFrame, *, confidence: float = DEFAULT_CONFIDENCE,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> TeamAgreement:
    """Agreement so far between every pair of annotators of ``frame`` (as for :func:`team_report`)."""
    ann = _annotations(frame)
    coded = ann[ann["label"].notna()] if len(ann) else ann
    agree_rows, alpha, alpha_units = [], None, 0
    if len(coded) and coded["user"].nunique() >= 2:
        report = agreement_report(coded, None, n_resamples=n_resamples, seed=seed, confidence=confidence)
        alpha, alpha_units = report.alpha, report.alpha_units
        for p in report.pairs:
            if p.n:
                agree_rows.append({"annotator A": p.a, "annotator B": p.b, "shared captions": p.n,
                                   "observed agreement": p.agreement, "kappa": p.kappa,
                                   "kappa low": p.kappa_ci[0] if p.kappa_ci else None,
                                   "kappa high": p.kappa_ci[1] if p.kappa_ci else None})
    agreement = pd.DataFrame(agree_rows, columns=AGREEMENT_COLUMNS)
    numbers = ["observed agreement", "kappa", "kappa low", "kappa high"]
    agreement[numbers] = agreement[numbers].astype(float)
    return TeamAgreement(agreement, float(confidence), int(n_resamples), int(seed), alpha, int(alpha_units))


def read_team_report(store, project: str, *, live=None, **options) -> TeamReport:
    """:func:`team_report` of ``project`` read from the store; ``live`` is a LiveJudgementFrame made with
    ``kinds=("annotation",), include_skipped=True, with_timing=True`` (a new one, read in full, by default)."""
    live = live or team_frame(store, project)
    frame, _ = live.get()
    return team_report(project, frame, assignment_frame(store, project), **options)


