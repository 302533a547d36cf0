"""Score baselines, systems and the human upper bound on a set of images."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np

from ..correspondence import caption_correspondences, caption_mentions, format_markup, mentioned_box_ids
from ..errors import InputError
from ..model import Item, Project
from .baselines import BASELINES, TEXTUAL, PriorArrays, rank_group, score_ranking
from .data import EvalSet, Group, compile_items, gold_sets
from .metric import Scores, harmonic, score_selection, summarise
from .priors import TextPriors, learn_priors
from .realise import realise

__all__ = ["Report", "Choice", "evaluate", "evaluate_project", "split_items", "upper_bound_group",
           "explain_image", "mention_counts", "parse_ks", "parse_baselines", "DEFAULT_KS", "DEFAULT_RUNS"]

DEFAULT_KS = tuple(range(1, 16))
DEFAULT_RUNS = 5          # random orders per image for the random baseline
DEFAULT_TEST_FRACTION = 0.2


@dataclass
class Report:
    """The outcome of :func:`evaluate`.

    ``per_image`` (only when asked for) maps a method name to per-image
    ``(I, K, 3)`` arrays of P, R, F (baselines; for ``random`` the first run)
    or ``(I, 3)`` (systems; ``upper_bound`` with NaN rows for images it
    could not score), aligned with ``keys``.
    """

    upper_bound: Scores
    baselines: dict[str, dict[int, Scores]]
    systems: dict[str, Scores]
    ks: tuple[int, ...]
    keys: list[str]
    meta: dict = field(default_factory=dict)
    per_image: dict[str, np.ndarray] | None = None

    def to_dict(self) -> dict:
        """The JSON shape of the CLI: upper_bound, baselines {name: {k: scores}}, systems, meta.

        Scores that do not exist (no image could be scored) are None rather than NaN, which JSON lacks.
        """
        def clean(s: Scores) -> dict:
            return {key: (None if v != v else v) for key, v in s.as_dict().items()}
        return {
            "upper_bound": clean(self.upper_bound),
            "baselines": {name: {str(k): clean(s) for k, s in by_k.items()} for name, by_k in self.baselines.items()},
            "systems": {name: clean(s) for name, s in self.systems.items()},
            "meta": self.meta,
        }

    def rows(self) -> list[dict]:
        """One flat row per (method, k): method, kind, k, P, R, F, P_sd, R_sd, F_sd, images."""
        out = [{"method": "upper bound", "kind": "human", "k": None, **self.upper_bound.as_dict(), "images": self.upper_bound.n}]
        for name, by_k in self.baselines.items():
            out.extend({"method": name, "kind": "baseline", "k": k, **s.as_dict(), "images": s.n} for k, s in by_k.items())
        out.extend({"method": name, "kind": "system", "k": None, **s.as_dict(), "images": s.n} for name, s in self.systems.items())
        return out


def parse_ks(spec: str | Iterable[int] | None) -> tuple[int, ...]:
    """``"1-15"``, ``"3"``, ``"1,3,5-7"`` or a list → sorted unique positive ks (InputError when malformed)."""
    if spec is None:
        return DEFAULT_KS
    if not isinstance(spec, str):
        ks = sorted({int(k) for k in spec})
    else:
        ks_set: set[int] = set()
        for part in spec.replace(" ", "").split(","):
            try:
                if "-" in part:
                    lo, hi = (int(x) for x in part.split("-", 1))
                    if lo > hi:
                        raise ValueError
                    ks_set.update(range(lo, hi + 1))
                else:
                    ks_set.add(int(part))
            except ValueError:
                raise InputError(f"bad k {part!r}: write e.g. 1-15, 3 or 1,3,5", "--k") from None
        ks = sorted(ks_set)
    if not ks or ks[0] < 1:
        raise InputError("k must be at least 1", "--k")
    return tuple(ks)


def parse_baselines(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"all"``, ``"none"``, ``"size,bigram+size"`` or a list → baseline names in canonical order."""
    if spec is None or spec == "all":
        return BASELINES
    if spec in ("", "none"):
        return ()
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise InputError(f"unknown baseline {unknown[0]!r}; choose from all, none, {', '.join(BASELINES)}", "--baselines")
    return tuple(b for b in BASELINES if b in names)


def split_items(items: Sequence[Item], seed: int, test_fraction: float = DEFAULT_TEST_FRACTION) -> tuple[list[Item], list[Item]]:
    """Split items into (train, test) at random with ``seed``.

    Items are first sorted by key, so the split does not depend on import
    order. With two or more items, both parts get at least one.
    """
    if not 0 < test_fraction < 1:
        raise InputError(f"the test fraction must be between 0 and 1, not {test_fraction}", "--test-fraction")
    ordered = sorted(items, key=lambda it: it.key)
    n = len(ordered)
    n_test = min(max(int(round(n * test_fraction)), 1), n - 1) if n >= 2 else n
    perm = np.random.default_rng(seed).permutation(n)
    test_idx = set(perm[:n_test].tolist())
    train = [it for j, it in enumerate(ordered) if j not in test_idx]
    test = [it for j, it in enumerate(ordered) if j in test_idx]
    return train, test


def upper_bound_group(group: Group):
    """Per image of ``group``: P, R, F of each gold set against the image's other gold sets, averaged.

    Returns (P, R, F, ok); images with fewer than two non-empty gold sets have
    ok = False. Per held-out description, F is the harmonic mean of its P and
    R and the image's F is the mean of those Fs (the image's P and R are always
    equal: each pair of descriptions is counted once each way).
    """
    g = group.gold.astype(float)
    inter = g @ g.transpose(0, 2, 1)                         # (I, M, M)
    size = group.gsize.astype(float)
    m = group.valid.shape[1]
    pair = group.valid[:, :, None] & group.valid[:, None, :] & ~np.eye(m, dtype=bool)[None]
    cnt = pair.sum(axis=2)
    denom = np.maximum(cnt, 1)
    pm = (inter / size[:, :, None] * pair).sum(axis=2) / denom
    rm = (inter / size[:, None, :] * pair).sum(axis=2) / denom
    fm = harmonic(pm, rm)
    held = cnt > 0
    nh = held.sum(axis=1)
    ok = nh > 0
    safe = np.maximum(nh, 1)
    return (pm * held).sum(1) / safe, (rm * held).sum(1) / safe, (fm * held).sum(1) / safe, ok


def _caption_of(item: Item, system: str):
    for c in item.captions:
        if c.system == system:
            return c
    return None


def evaluate(eval_items: Sequence[Item], train_items: Sequence[Item] | None = None, *,
             priors: TextPriors | None = None, baselines: Iterable[str] = BASELINES,
             ks: Iterable[int] = DEFAULT_KS, systems: Iterable[str] = (), runs: int = DEFAULT_RUNS,
             seed: int = 0, per_image: bool = False, evalset: EvalSet | None = None) -> Report:
    """Score the upper bound, the baselines at every k, and systems' captions on ``eval_items``.

    Textual priors come from ``priors`` or are learned from ``train_items``.
    The random baseline pools ``runs`` random orders per image (every
    (image, run) pair is one observation, so its sd is that of a single run).
    A system's image without a caption, or whose caption has no
    correspondences, counts as an empty selection (P = R = F = 0). A system
    whose stored mentions point at a box its item does not have is left out
    of ``systems`` and named, with the caption, in ``meta["systems_skipped"]``;
    ``meta["systems_without_mentions"]`` names systems none of whose captions
    has a correspondence (their scores are all 0).
    """
    baselines = tuple(baselines)
    ks_arr = np.asarray(parse_ks(list(ks)), dtype=np.int64)
    es = evalset if evalset is not None else compile_items(eval_items)
    n_img = len(es)
    n_k = len(ks_arr)
    meta: dict = {"images": n_img, "skipped_images": len(es.skipped), "unknown_gold_box_ids": es.unknown_gold_ids,
                  "ks": [int(k) for k in ks_arr], "random_runs": runs, "seed": seed}

    pa = None
    if any(b.split("+")[0] in TEXTUAL for b in baselines):
        if priors is None:
            priors = learn_priors(train_items or [])
        if priors.descriptions == 0:
            raise InputError("the textual baselines need training images whose descriptions mention boxes; "
                             "none were found (choose a training project or split, or leave textual baselines out)")
        pa = PriorArrays(*priors.arrays(es.vocab))
    if priors is not None:
        meta["train_images"] = priors.images
        meta["train_descriptions"] = priors.descriptions

    results: dict[str, dict[int, Scores]] = {}
    per: dict[str, np.ndarray] = {}
    for name in baselines:
        n_runs = runs if name == "random" else 1
        prf = np.zeros((n_runs, n_img, n_k, 3))
        for g in es.groups:
            for run in range(n_runs):
                ranking = rank_group(name, g, pa, seed=seed, run=run)
                p, r, f = score_ranking(g, ranking, ks_arr)
                prf[run, g.idx] = np.stack([p, r, f], axis=-1)
        # n counts images, also for the pooled random runs.
        results[name] = {int(k): replace(summarise(prf[:, :, j, 0], prf[:, :, j, 1], prf[:, :, j, 2]), n=n_img)
                         for j, k in enumerate(ks_arr)}
        if per_image:
            per[name] = prf[0]

    ub = np.full((n_img, 3), np.nan)
    for g in es.groups:
        p, r, f, ok = upper_bound_group(g)
        ub[g.idx[ok]] = np.stack([p[ok], r[ok], f[ok]], axis=-1)
    have = ~np.isnan(ub[:, 0])
    upper = summarise(ub[have, 0], ub[have, 1], ub[have, 2])
    meta["upper_bound_images"] = int(have.sum())
    if per_image:
        per["upper_bound"] = ub

    sys_scores: dict[str, Scores] = {}
    missing: dict[str, int] = {}
    skipped: dict[str, str] = {}
    unmarked: list[str] = []
    for name in systems:
        try:
            chosen = _system_selections(es.items, name)
        except InputError as exc:
            # One system's broken correspondences never hide the others: report it and go on.
            skipped[name] = str(exc)
            continue
        prf = np.zeros((n_img, 3))
        for j, ids in enumerate(chosen):
            if ids is not None:
                prf[j] = score_selection(ids, gold_sets(es.items[j]))
        sys_scores[name] = summarise(prf[:, 0], prf[:, 1], prf[:, 2])
        missing[name] = sum(ids is None for ids in chosen)
        if chosen and not any(ids for ids in chosen):
            unmarked.append(name)
        if per_image:
            per[f"system:{name}"] = prf
    if systems:
        meta["system_captions_missing"] = missing
        meta["systems_skipped"] = skipped
        meta["systems_without_mentions"] = unmarked
    return Report(upper, results, sys_scores, tuple(int(k) for k in ks_arr), [it.key for it in es.items], meta,
                  per if per_image else None)


def _system_selections(items: Sequence[Item], system: str) -> list[frozenset[str] | None]:
    """Per item, the box ids ``system``'s caption mentions (None: no caption); InputError on an unknown box."""
    out: list[frozenset[str] | None] = []
    for item in items:
        cap = _caption_of(item, system)
        out.append(None if cap is None else mentioned_box_ids(caption_mentions(cap, item)))
    return out


def evaluate_project(project: Project, *, train_project: Project | None = None, split_seed: int | None = None,
                     test_fraction: float = DEFAULT_TEST_FRACTION, baselines: Iterable[str] = BASELINES,
                     ks: Iterable[int] = DEFAULT_KS, systems: Iterable[str] | None = (), runs: int = DEFAULT_RUNS,
                     seed: int = 0, per_image: bool = False) -> Report:
    """Evaluate on a project: priors from ``train_project`` (scoring all of ``project``), or from a seeded split.

    Without a training project the project is split with ``split_seed``
    (default 0): priors come from the training part and everything (upper
    bound, every baseline, systems) is scored on the test part only, so all
    numbers describe the same images. ``systems=None`` means all the
    project's systems.
    """
    if systems is None:
        systems = project.systems
    unknown = [s for s in systems if s not in project.systems]
    if unknown:
        raise InputError(f"project {project.name!r} has no captions from system {unknown[0]!r}", "--system")
    if train_project is not None:
        train, test = train_project.items, project.items
        how = {"train_project": train_project.name}
    else:
        split_seed = 0 if split_seed is None else split_seed
        train, test = split_items(project.items, split_seed, test_fraction)
        how = {"split_seed": split_seed, "test_fraction": test_fraction}
    report = evaluate(test, train, baselines=baselines, ks=ks, systems=systems, runs=runs, seed=seed, per_image=per_image)
    report.meta = {"project": project.name, **how, **report.meta}
    return report


def mention_counts(item: Item) -> dict[str, int]:
    """For each box of the item, in how many of its references it is mentioned."""
    golds = gold_sets(item)
    return {b.box_id: sum(b.box_id in g for g in golds) for b in item.boxes}


@dataclass(frozen=True)
class Choice:
    """What one method chose for one image."""

    method: str
    k: int | None
    selected: tuple[str, ...]          # box ids, in selection order
    ranking: tuple[str, ...]           # the baseline's full order (the selection for a system)
    scores: tuple[float, float, float] | None   # P, R, F (None when the image has no gold set)
    sentence: str                      # marked-up sentence (realised for baselines, the caption for systems)


def explain_image(item: Item, method: str, k: int | None = None, *, priors: TextPriors | None = None,
                  seed: int = 0, run: int = 0, sentence_seed: int = 0) -> Choice:
    """The boxes ``method`` (a baseline name or ``system:NAME``) chooses for one image, and its score.

    Uses the same ranking code as :func:`evaluate`, so the choice matches
    the evaluation (for ``random``, run ``run`` of ``seed``).
    """
    golds = gold_sets(item)
    if method.startswith("system:"):
        name = method.split(":", 1)[1]
        cap = _caption_of(item, name)
        if cap is None:
            raise InputError(f"system {name!r} has no caption for item {item.key!r}")
        plain, mentions = caption_correspondences(cap, item)
        chosen = tuple(dict.fromkeys(b for m in sorted(mentions, key=lambda m: m.start) for b in m.box_ids))
        try:
            sentence = format_markup(plain, mentions) if mentions else plain
        except ValueError:  # stored mentions that overlap cannot be written inline
            sentence = plain
        return Choice(method, None, chosen, chosen, score_selection(chosen, golds), sentence)
    if method not in BASELINES:
        raise InputError(f"unknown method {method!r}")
    if k is None or k < 1:
        raise InputError("k must be at least 1")
    es = compile_items([item], require_gold=False)
    if not es.groups:
        return Choice(method, k, (), (), score_selection((), golds), "")
    pa = None
    if method.split("+")[0] in TEXTUAL:
        if priors is None or priors.descriptions == 0:
            raise InputError(f"the {method} baseline needs textual priors learned from training descriptions")
        pa = PriorArrays(*priors.arrays(es.vocab))
    ranking = rank_group(method, es.groups[0], pa, seed=seed, run=run)
    order = [item.boxes[j].box_id for j in ranking.order[0]]
    chosen = tuple(order[:min(k, int(ranking.length[0]))])
    sentence = realise([item.box(b) for b in chosen], seed=sentence_seed)
    return Choice(method, k, chosen, tuple(order[:int(ranking.length[0])]), score_selection(chosen, golds), sentence)
