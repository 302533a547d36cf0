"""Who judges which caption: queues, the blind double-annotation sample, practice items.

Plan (pure, deterministic — :func:`plan_assignment`):

* Regular captions are split across the annotators, either in balanced
  contiguous blocks (default: each annotator sees whole stretches of the
  data, block sizes differ by at most one) or round-robin.
* A seeded random sample (default 10 %, ``round(fraction × n)`` captions) is
  given to a second annotator too. Pairs rotate so each annotator checks
  every other one about equally. Second annotators work *blind*: the annotate
  page only ever shows a user's own judgements.
* Practice items (``items.is_practice``) go to every annotator, first in the
  queue; they are left out of the double-annotation sample (and, by the
  agreement code, out of agreement).
* Within a queue the captions keep project order, so double-annotated ones
  are interleaved with the rest and do not stand out.

Second pass (project setting ``second_pass``):

* ``staged`` (default, as in the error-analysis study): the second annotator
  first makes only the coarse judgement (accurate / inaccurate) on a double
  caption. Once *both* annotators judged it inaccurate, the caption comes back
  to the second annotator for the fine-grained pass (error types). The second
  annotator never sees the first annotator's error types or note; they learn
  only what reaching the fine pass implies — that the first annotator also
  found the caption inaccurate. Until the fine pass is done the second
  annotator's judgement is stored as ``inaccurate`` with no error types.
* ``full``: the second annotator makes both judgements at once, like the
  first; fine-grained agreement is then computed over the captions both
  judged inaccurate.

Sample draws (:func:`assign_sample`, ``assign --active N`` / ``--random N``):

* Instead of every caption, the next human sample of a system: a seeded
  Poisson draw of about N captions not labelled yet, each with a recorded
  inclusion probability (:mod:`annotator.estimate.sampling`), which the
  estimate reads as a weight. ``active`` favours the captions whose labels
  shrink the widest intervals most; ``uniform`` gives all the same chance.
* The drawn captions are added to the end of the annotators' queues in a
  shuffled order, shared out evenly, one annotator each; captions already in
  a queue keep their place. Nothing else changes: the blind double sample and
  the second-pass mode stay as they are, practice items are never drawn (an
  annotator whose queue was empty gets them first, as in a regular
  assignment).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Sequence

from .accounts.access import LEADS, require_role
from .errors import Conflict, InputError, NotFound
from .model import Role
from .store.project_settings import DEFAULT_SECOND_PASS, SECOND_PASS_KEY  # noqa: F401 - named here by commands and the queue

SPLITS = ("blocks", "round-robin")
SECOND_PASS_MODES = ("staged", "full")
DEFAULT_DOUBLE_FRACTION = 0.1


@dataclass(frozen=True)
class CaptionRef:
    """A caption to assign: its id and whether its item is a practice item."""

    caption_id: int
    is_practice: bool = False


@dataclass(frozen=True)
class PlannedAssignment:
    """One row of the plan: ``annotator`` judges ``caption_id`` at ``position`` of their queue."""

    caption_id: int
    annotator: str
    position: int
    is_second: bool = False


def _blocks(n: int, m: int) -> list[int]:
    """Owner index of each of ``n`` captions for ``m`` annotators in contiguous balanced blocks."""
    base, extra = divmod(n, m)
    owners = []
    for a in range(m):
        owners.extend([a] * (base + (1 if a < extra else 0)))
    return owners


def double_sample_size(n: int, fraction: float) -> int:
    """How many of ``n`` regular captions are double-annotated: round(fraction × n), half up."""
    return min(n, int(fraction * n + 0.5))


def plan_assignment(captions: Sequence[CaptionRef | int], annotators: Sequence[str], *,
                    double_fraction: float = DEFAULT_DOUBLE_FRACTION, seed: int = 0,
                    split: str = "blocks") -> list[PlannedAssignment]:
    """Split captions across annotators and pick the blind double sample (deterministic for a seed)."""
    names = list(dict.fromkeys(a.strip() for a in annotators if a and a.strip()))
    if not names:
        raise InputError("name at least one annotator")
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if not 0.0 <= double_fraction <= 1.0:
        raise InputError(f"the double-annotation fraction must be between 0 and 1, not {double_fraction}")
    refs = [c if isinstance(c, CaptionRef) else CaptionRef(int(c)) for c in captions]
    if len({c.caption_id for c in refs}) != len(refs):
        raise InputError("a caption appears twice in the list to assign")
    practice = [c for c in refs if c.is_practice]
    regular = [c for c in refs if not c.is_practice]
    m, n = len(names), len(regular)
    k = double_sample_size(n, double_fraction)
    if k and m < 2:
        raise InputError("double annotation needs at least two annotators (use a fraction of 0 for one annotator)")

    owners = _blocks(n, m) if split == "blocks" else [i % m for i in range(n)]
    sample = sorted(random.Random(seed).sample(range(n), k)) if k else []
    second_of: dict[int, int] = {}
    rotation = Counter()
    for i in sample:
        p = owners[i]
        others = [a for a in range(m) if a != p]
        second_of[i] = others[rotation[p] % len(others)]
        rotation[p] += 1

    # Each queue: practice first, then its captions (own and second) in project order.
    queues: dict[int, list[tuple[int, bool]]] = {a: [] for a in range(m)}
    for i, c in enumerate(regular):
        queues[owners[i]].append((c.caption_id, False))
        if i in second_of:
            queues[second_of[i]].append((c.caption_id, True))
    out: list[PlannedAssignment] = []
    for a, name in enumerate(names):
        pos = 0
        for c in practice:
            out.append(PlannedAssignment(c.caption_id, name, pos, False))
            pos += 1
        for cid, second in queues[a]:
            out.append(PlannedAssignment(cid, name, pos, second))
            pos += 1
    return out


@dataclass
class AssignmentSummary:
    """What an assignment run wrote."""

    project: str
    captions: int
    practice: int
    double: int
    second_pass: str
    seed: int
    split: str
    per_annotator: dict[str, dict[str, int]] = field(default_factory=dict)


def assign(store, project: str, annotators: Sequence[str], *, double_fraction: float = DEFAULT_DOUBLE_FRACTION,
           seed: int = 0, systems: Sequence[str] | None = None, split: str = "blocks",
           second_pass: str = DEFAULT_SECOND_PASS, replace: bool = False,
           actor_role: Role | str = Role.ADMIN) -> AssignmentSummary:
    """Plan and store the assignment of a project's captions (lead/admin only).

    Existing judgements are never touched. A project that has assignments
    already needs ``replace=True``; re-running with the same arguments gives
    the same queues.
    """
    from .store.assignments import count_project_assignments, project_captions, replace_assignments
    from .store.project_settings import set_setting
    from .store.projects import project_id, system_id
    from .store.users import get_user_row

    require_role(actor_role, LEADS, "assigning work")
    if second_pass not in SECOND_PASS_MODES:
        raise InputError(f"unknown second-pass mode {second_pass!r}; choose one of {', '.join(SECOND_PASS_MODES)}")
    with store.transaction() as conn:
        pid = project_id(conn, project)
        for s in systems or ():
            system_id(conn, pid, s)  # NotFound names the missing system
        names = list(dict.fromkeys(a.strip() for a in annotators if a and a.strip()))
        rows = {n: get_user_row(conn, n) for n in names}
        missing = [n for n, r in rows.items() if r is None]
        if missing:
            raise InputError(f"no user called {', '.join(repr(n) for n in missing)}; create accounts first "
                             "(annotator users add NAME --role annotator)")
        if count_project_assignments(conn, pid) and not replace:
            raise InputError(f"project {project!r} has assignments already; pass replace (--replace) to redo them "
                             "(judgements already made are kept)")
        caps = project_captions(conn, pid, list(systems) if systems else None)
        if not caps:
            raise NotFound(f"project {project!r} has no captions to assign")
        refs = [CaptionRef(r.caption_id, bool(r.is_practice)) for r in caps]
        plan = plan_assignment(refs, names, double_fraction=double_fraction, seed=seed, split=split)
        uid = {n: r.id for n, r in rows.items()}
        replace_assignments(conn, pid, [{"caption_id": p.caption_id, "user_id": uid[p.annotator],
                                         "position": p.position, "is_second": p.is_second} for p in plan])
        set_setting(conn, pid, SECOND_PASS_KEY, second_pass)
    practice = sum(1 for r in refs if r.is_practice)
    summary = AssignmentSummary(project=project, captions=len(refs), practice=practice,
                                double=sum(1 for p in plan if p.is_second), second_pass=second_pass,
                                seed=seed, split=split)
    for n in names:
        mine = [p for p in plan if p.annotator == n]
        summary.per_annotator[n] = {"total": len(mine), "second": sum(p.is_second for p in mine), "practice": practice,
                                    "first": len(mine) - practice - sum(p.is_second for p in mine)}
    return summary


@dataclass
class DrawSummary:
    """What one sample draw of a system took and where its captions went."""

    system: str
    draw_id: int
    number: int  # the system's n-th draw
    design: str
    size: int  # expected number of new captions
    taken: int  # new captions drawn
    labelled_before: int  # captions labelled before the draw, part of it for certain
    candidates: int  # captions not labelled before (practice items left out)
    targets: tuple[str, ...]
    widths: dict[str, float | None]  # each target's interval width before the draw
    floor: float
    seed: int
    layer: str
    probability_range: tuple[float, float] | None  # smallest and largest chance of the captions drawn
    queued: int  # added to queues
    already_queued: int  # drawn but in a queue already (left in place)
    per_annotator: dict[str, int] = field(default_factory=dict)
    judge: str | None = None  # an active draw: the judge whose scores set its chances


@dataclass
class SampleSummary:
    """What :func:`assign_sample` wrote: one draw per system."""

    project: str
    draws: list[DrawSummary] = field(default_factory=list)
    practice_added: dict[str, int] = field(default_factory=dict)


def plan_sample(store, project: str, annotators: Sequence[str], size: int, *, systems: Sequence[str] | None = None,
                  design: str = "active", seed: int = 0, layer: str = "adjudicated",
                  targets: Sequence[str] | None = None, widest: int | None = None, floor: float | None = None,
                  actor_role: Role | str = Role.ADMIN, judge: str | None = None) -> "SamplePlan":
    """Work out the next human sample of each system (about ``size`` captions each) without writing it (lead/admin
    only); :func:`record_sample` draws and queues it.

    ``design`` is ``active`` (chances where labels shrink the widest intervals
    most; ``targets`` names the intervals to aim at, else the ``widest`` ones of
    the current estimate from ``layer``) or ``uniform``. Captions labelled in
    ``layer`` already are part of the draw for certain. The draw is recorded
    with every caption's inclusion probability; the same seed on the same data
    gives the same draw. See the module documentation for the queues.
    ``judge`` (annotator.judges; default the detectors) is whose scores an
    active draw reads for how unsure each caption is, and is recorded with it.
    """
    from .estimate.project import draws_as_rows, layer_labels, project_detections, recorded_draws
    from .estimate.report import estimate_report
    from .estimate.sampling import DEFAULT_FLOOR, DEFAULT_WIDEST, DESIGNS, TARGETS, allocate, interval_widths
    from .layers import build_layer, parse_layer
    from .store.analysis_queries import judgement_frame
    from .store.projects import load_project, project_id
    from .store.users import get_user_row
    from .taxonomy import taxonomy

    require_role(actor_role, LEADS, "assigning work")
    if design not in DESIGNS:
        raise InputError(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}")
    if int(size) != size or size < 1:
        raise InputError(f"the number of captions to draw must be a whole number of at least 1, not {size}")
    if seed < 0:
        raise InputError(f"the seed must be 0 or more, not {seed}")
    floor = DEFAULT_FLOOR if floor is None else float(floor)
    if not 0.0 <= floor <= 1.0:
        raise InputError(f"the floor must be between 0 and 1, not {floor}")
    widest = DEFAULT_WIDEST if widest is None else int(widest)
    if widest < 1:
        raise InputError(f"aim at 1 or more of the widest intervals, not {widest}")
    if targets:
        tax = taxonomy()
        targets = [t if t == "inaccurate" else tax.resolve_strict(t, "targets") for t in targets]
        unknown = [t for t in targets if t not in TARGETS]
        if unknown:
            raise InputError(f"unknown targets {', '.join(map(repr, unknown))}; choose 'inaccurate' or error type ids")
    names = list(dict.fromkeys(a.strip() for a in annotators if a and a.strip()))
    if not names:
        raise InputError("name at least one annotator")
    chosen_layer = parse_layer(layer)
    with store.read() as conn:
        pid = project_id(conn, project)
        rows = {n: get_user_row(conn, n) for n in names}
    missing = [n for n, r in rows.items() if r is None]
    if missing:
        raise InputError(f"no user called {', '.join(repr(n) for n in missing)}; create accounts first "
                         "(annotator users add NAME --role annotator)")
    proj = load_project(store, project)
    chosen = list(dict.fromkeys(systems)) if systems else list(proj.systems)
    for s in chosen:
        if s not in proj.systems:
            raise NotFound(f"project {project!r} has no system {s!r}; systems: {', '.join(proj.systems) or 'none'}")
    if not chosen:
        raise NotFound(f"project {project!r} has no captions to draw from")
    built = build_layer(judgement_frame(store, project, kinds=("annotation", "adjudication")), chosen_layer)
    if built.name.startswith("annotator:") and len(built) == 0:
        raise NotFound(f"{chosen_layer.user!r} has no judgements in project {project!r}")
    scored = project_detections(proj)
    earlier = recorded_draws(store, project)
    source = _draw_judge(store, project, judge, design)

    planned = []
    for s in chosen:
        sc = scored[s]
        if not len(sc.caption_ids):
            raise NotFound(f"system {s!r} has no captions to draw from (captions of practice items are never drawn)")
        human = layer_labels(built, sc.caption_ids)
        if earlier.get(s):
            human = replace(human, draws=draws_as_rows(sc.caption_ids, earlier[s]))
        widths = None
        predictor = None if source is None else source.scores_for(sc)
        if len(human.rows) >= 2:
            try:
                widths = interval_widths(estimate_report(sc.detections, human, system=s, predictor=predictor))
            except ValueError:  # the draws so far cannot give an estimate yet
                widths = None
        scores = {t: (predictor or sc.detections).score(t) for t in TARGETS}
        try:
            alloc = allocate(scores, human, int(size), design=design, targets=targets, widest=widest, floor=floor,
                             widths=widths)
        except ValueError as exc:
            raise InputError(f"system {s!r}: {exc}") from None
        planned.append((s, sc, alloc))
    return SamplePlan(project, names, rows, built.name, design, int(seed), floor, tuple(planned),
                      {s: len(earlier.get(s, ())) for s in chosen},
                      None if design != "active" else (source.name if source is not None else "detectors"))


def _draw_judge(store, project: str, judge: str | None, design: str):
    """The judge an active draw reads its chances from (None: the detectors); InputError for a judge with a
    uniform draw, whose chances read nothing."""
    if judge is None or judge == "detectors":
        return None
    if design != "active":
        raise InputError("a uniform draw gives every caption the same chance: --judge belongs to --active", "--judge")
    from .judges import load_judge
    return load_judge(store, project, judge)


@dataclass(frozen=True)
class SamplePlan:
    """A sample draw worked out by :func:`plan_sample`, not written yet."""

    project: str
    names: list[str]
    users: dict  # annotator name -> user row
    layer: str  # the layer whose labels the chances were worked out from
    design: str
    seed: int
    floor: float
    planned: tuple  # (system, SystemCaptions, Allocation) per system
    draws_seen: dict[str, int]  # each system's recorded draws when the plan was made
    judge: str | None = None  # the judge an active draw's chances come from


def assign_sample(store, project: str, annotators: Sequence[str], size: int, *, systems: Sequence[str] | None = None,
                  design: str = "active", seed: int = 0, layer: str = "adjudicated",
                  targets: Sequence[str] | None = None, widest: int | None = None, floor: float | None = None,
                  actor_role: Role | str = Role.ADMIN, judge: str | None = None) -> SampleSummary:
    """Draw the next human sample of each system (about ``size`` captions each) and queue it (lead/admin only).

    :func:`plan_sample` (its arguments are explained there) then :func:`record_sample`.
    """
    return record_sample(store, plan_sample(store, project, annotators, size, systems=systems, design=design,
                                            seed=seed, layer=layer, targets=targets, widest=widest, floor=floor,
                                            actor_role=actor_role, judge=judge))


def record_sample(store, plan: SamplePlan) -> SampleSummary:
    """Draw and queue a planned sample in one transaction.

    Draws of one project are recorded one at a time. A plan that another
    draw of one of its systems overtook (recorded after the plan was made)
    raises :class:`~annotator.errors.Conflict` and writes nothing: its
    chances were worked out without the other draw's captions.
    """
    from .estimate.sampling import draw_seed
    from .store.assignments import (add_assignments, draws_made, insert_draw, project_captions, queue_ends,
                                    queued_captions)
    from .store.rows import lock_key
    from .store.projects import project_id, system_id
    project, names, rows, design, seed, floor = plan.project, plan.names, plan.users, plan.design, plan.seed, plan.floor
    chosen = [s for s, _, _ in plan.planned]
    summary = SampleSummary(project)
    with store.transaction() as conn:
        pid = project_id(conn, project)
        lock_key(conn, f"sample-draw:{pid}")  # PostgreSQL: one draw of a project at a time (SQLite: one writer anyway)
        uid = {n: r.id for n, r in rows.items()}
        ends = queue_ends(conn, pid, list(uid.values()))
        queued = queued_captions(conn, pid)
        practice = [r.caption_id for r in project_captions(conn, pid, chosen) if r.is_practice]
        new_rows: list[dict] = []
        for n in names:
            if ends[uid[n]] < 0 and practice:
                for cid in practice:
                    ends[uid[n]] += 1
                    new_rows.append({"caption_id": cid, "user_id": uid[n], "position": ends[uid[n]], "is_second": False})
                summary.practice_added[n] = len(practice)
        for s, sc, alloc in plan.planned:
            sid = system_id(conn, pid, s)
            made, seen = draws_made(conn, sid), plan.draws_seen[s]
            if made != seen:
                raise Conflict(f"another sample draw of system {s!r} was recorded while this one was being planned "
                               f"(it now has {made} draw{'s' if made != 1 else ''}, {seen} when this one started); "
                               "nothing was drawn or queued: look at the queues, then draw again if more captions "
                               "are wanted")
            number = made + 1
            rng = draw_seed(seed, sid, number)
            taken_rows = alloc.draw(rng)
            pi = alloc.probabilities[taken_rows]
            fresh = taken_rows[~alloc.labelled[taken_rows]]
            draw_id = insert_draw(conn, pid, sid, list(zip(sc.caption_ids[taken_rows].tolist(), pi.tolist())),
                                  number=number, design=design, size=alloc.size, seed=int(seed),
                                  layer=plan.layer, targets=" ".join(alloc.targets), floor=floor,
                                  taken=len(fresh), labelled_before=int(alloc.labelled.sum()),
                                  created_at=datetime.now(timezone.utc), predictor=plan.judge)
            fresh_ids = sc.caption_ids[fresh]
            to_queue = [int(c) for c in rng.permutation(fresh_ids) if int(c) not in queued]
            owners = _blocks(len(to_queue), len(names))
            per = Counter()
            for cid, a in zip(to_queue, owners):
                n = names[a]
                ends[uid[n]] += 1
                new_rows.append({"caption_id": cid, "user_id": uid[n], "position": ends[uid[n]], "is_second": False})
                per[n] += 1
            queued.update(to_queue)
            drawn_pi = alloc.probabilities[fresh]
            summary.draws.append(DrawSummary(
                system=s, draw_id=draw_id, number=number, design=design, size=alloc.size, taken=len(fresh),
                labelled_before=int(alloc.labelled.sum()), candidates=alloc.candidates, targets=alloc.targets,
                widths=alloc.widths, floor=floor, seed=int(seed), layer=plan.layer,
                probability_range=(float(drawn_pi.min()), float(drawn_pi.max())) if len(fresh) else None,
                queued=len(to_queue), already_queued=len(fresh) - len(to_queue),
                per_annotator={n: per[n] for n in names}, judge=plan.judge))
        add_assignments(conn, pid, new_rows)
    return summary


def sample_draws(store, project: str, *, actor_role: Role | str = Role.ADMIN) -> list[dict]:
    """The project's sample draws in order (lead/analyst/admin): id, system, number, design, size, taken,
    labelled_before, seed, layer, targets, floor, created_at."""
    from .accounts.access import REVIEW
    from .store.assignments import project_draws
    from .store.projects import project_id
    require_role(actor_role, REVIEW, "seeing the sample draws")
    with store.read() as conn:
        return project_draws(conn, project_id(conn, project))


def second_pass_mode(store, project: str) -> str:
    """The project's second-pass mode (``staged`` unless set otherwise)."""
    from .store.project_settings import get_setting
    from .store.projects import project_id
    with store.read() as conn:
        return get_setting(conn, project_id(conn, project), SECOND_PASS_KEY, DEFAULT_SECOND_PASS)


def set_second_pass_mode(store, project: str, mode: str, *, actor_role: Role | str = Role.ADMIN) -> None:
    """Change the project's second-pass mode (lead/admin only)."""
    from .store.project_settings import set_setting
    from .store.projects import project_id
    require_role(actor_role, LEADS, "changing the second pass")
    if mode not in SECOND_PASS_MODES:
        raise InputError(f"unknown second-pass mode {mode!r}; choose one of {', '.join(SECOND_PASS_MODES)}")
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), SECOND_PASS_KEY, mode)


def assignment_overview(store, project: str, *, actor_role: Role | str = Role.ADMIN) -> list[dict]:
    """Per assigned user: assigned, done, second (blind double), practice (lead/analyst/admin)."""
    from .accounts.access import REVIEW
    from .store.assignments import overview
    from .store.projects import project_id
    require_role(actor_role, REVIEW, "seeing everyone's progress")
    with store.read() as conn:
        return overview(conn, project_id(conn, project))


def double_pairs(store, project: str, *, actor_role: Role | str = Role.ADMIN) -> list[tuple[int, str, str]]:
    """(caption_id, first annotator, second annotator) of the blind double sample."""
    from .accounts.access import REVIEW
    from .store.assignments import double_annotated_pairs
    from .store.projects import project_id
    require_role(actor_role, REVIEW, "seeing the double-annotation pairs")
    with store.read() as conn:
        return double_annotated_pairs(conn, project_id(conn, project))


def assign_to_self(store, project: str, user: str, role: Role | str) -> AssignmentSummary:
    """Give every caption of an unassigned project to one lead/admin (single-user local work)."""
    from .accounts.auth import ensure_user_id
    from .store.assignments import count_project_assignments
    from .store.projects import project_id
    require_role(role, LEADS, "assigning work")
    with store.read() as conn:
        if count_project_assignments(conn, project_id(conn, project)):
            raise InputError(f"project {project!r} has assignments already")
    ensure_user_id(store, user, role)
    return assign(store, project, [user], double_fraction=0.0, actor_role=role)


def project_systems(store, project: str) -> list[str]:
    """The systems (caption sources) of a project, in import order."""
    from .store.projects import system_names
    return system_names(store, project)


def mark_practice(store, project: str, item_keys, practice: bool = True, *, actor_role: Role | str = Role.ADMIN) -> int:
    """Mark (or unmark) items as practice items (lead/admin); return how many changed."""
    from .store.projects import set_practice
    require_role(actor_role, LEADS, "choosing practice items")
    keys = [k.strip() for k in item_keys if k and k.strip()]
    if not keys:
        raise InputError("give at least one item key")
    return set_practice(store, project, keys, practice)


def annotated_sample_index(store, project: str) -> int:
    """The sample index ``n`` whose captions the project's annotation works on (0, the first, unless chosen)."""
    from .store.projects import project_id
    from .store.samples import annotated_index
    with store.read() as conn:
        return annotated_index(conn, project_id(conn, project))


def set_annotated_sample_index(store, project: str, index: int, *, actor_role: Role | str = Role.ADMIN) -> int:
    """Choose which sample index ``n`` of each system's captions the project annotates (lead/admin only).

    Refused while the project holds judgements, corrections, human scores or human-sample draws, and for an
    index no caption of the project has (:func:`annotator.store.samples.set_annotated_index`)."""
    from .store.projects import project_id
    from .store.samples import set_annotated_index
    require_role(actor_role, LEADS, "choosing the annotated sample")
    with store.transaction() as conn:
        return set_annotated_index(conn, project_id(conn, project), project, index)
