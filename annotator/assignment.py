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
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from .access import LEADS, require_role
from .errors import InputError, NotFound
from .model import Role

SPLITS = ("blocks", "round-robin")
SECOND_PASS_MODES = ("staged", "full")
SECOND_PASS_KEY = "second_pass"
DEFAULT_SECOND_PASS = "staged"
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
    from .access import REVIEW
    from .store.assignments import overview
    from .store.projects import project_id
    require_role(actor_role, REVIEW, "seeing everyone's progress")
    with store.read() as conn:
        return overview(conn, project_id(conn, project))


def double_pairs(store, project: str, *, actor_role: Role | str = Role.ADMIN) -> list[tuple[int, str, str]]:
    """(caption_id, first annotator, second annotator) of the blind double sample."""
    from .access import REVIEW
    from .store.assignments import double_annotated_pairs
    from .store.projects import project_id
    require_role(actor_role, REVIEW, "seeing the double-annotation pairs")
    with store.read() as conn:
        return double_annotated_pairs(conn, project_id(conn, project))


def assign_to_self(store, project: str, user: str, role: Role | str) -> AssignmentSummary:
    """Give every caption of an unassigned project to one lead/admin (single-user local work)."""
    from .auth import ensure_user_id
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
