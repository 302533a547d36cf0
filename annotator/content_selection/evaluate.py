"""Score baselines, systems and the human upper bound on a set of images."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import PurePath
from typing import Iterable, Sequence

import numpy as np

from ..correspondence import caption_correspondences, caption_mentions, format_markup, mentioned_box_ids
from ..errors import InputError
from ..model import Item, Project
from .baselines import BASELINES, PriorArrays, needs_priors, rank_group, score_ranking
from .data import EMPTY_DESCRIPTIONS, SINGLE_DESCRIPTIONS, SKIP_REASONS, EvalSet, Group, compile_items, gold_sets
from .metric import Scores, harmonic, score_selection, summarise
from .priors import TextPriors, learn_priors, leave_one_out
from .realise import realise
from .stats import MentionStats

__all__ = ["Report", "Choice", "evaluate", "evaluate_project", "upper_bound_group", "explain_image", "mention_counts",
           "parse_ks", "parse_baselines", "scope_lines", "DEFAULT_KS", "DEFAULT_RUNS", "LEAVE_ONE_OUT"]

DEFAULT_KS = tuple(range(1, 16))
DEFAULT_RUNS = 5          # random orders per image for the random baseline
LEAVE_ONE_OUT = "leave-one-image-out"


@dataclass
class Report:
    """The outcome of :func:`evaluate`.

    Every baseline and system row is a mean over the same images, ``keys``;
    the upper bound over those of them with two or more gold descriptions
    (all of them with ``single_descriptions="skip"``; ``meta`` counts both).
    ``upper_bound`` is None when it was not asked for. ``skipped`` maps each image left out to its reason (one
    of :data:`.data.SKIP_REASONS`); ``stats`` counts the instances the gold
    descriptions of the scored images mention.

    ``per_image`` (only when asked for) maps a method name to per-image
    ``(I, K, 3)`` arrays of P, R, F (baselines; for ``random`` the first run)
    or ``(I, 3)`` (systems and ``upper_bound``), aligned with ``keys``.
    """

    upper_bound: Scores | None
    baselines: dict[str, dict[int, Scores]]
    systems: dict[str, Scores]
    ks: tuple[int, ...]
    keys: list[str]
    meta: dict = field(default_factory=dict)
    per_image: dict[str, np.ndarray] | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    stats: MentionStats | None = None

    def to_dict(self) -> dict:
        """The JSON shape of the CLI: upper_bound, baselines {name: {k: scores}}, systems, images, statistics, meta.

        ``images`` lists the scored images (every row's mean is over exactly
        these) with their mention statistics, and the skipped ones with the
        reason. Scores that do not exist (no image could be scored) are None
        rather than NaN, which JSON lacks.
        """
        def clean(s: Scores) -> dict:
            return {key: (None if v != v else v) for key, v in s.as_dict().items()}
        return {
            "upper_bound": None if self.upper_bound is None else clean(self.upper_bound),
            "baselines": {name: {str(k): clean(s) for k, s in by_k.items()} for name, by_k in self.baselines.items()},
            "systems": {name: clean(s) for name, s in self.systems.items()},
            "images": {"scored": self.stats.rows() if self.stats else [{"key": k} for k in self.keys],
                       "skipped": dict(self.skipped)},
            "statistics": self.stats.corpus() if self.stats else None,
            "meta": self.meta,
        }

    def rows(self) -> list[dict]:
        """One flat row per (method, k): method, kind, k, P, R, F, P_sd, R_sd, F_sd, images."""
        out = []
        if self.upper_bound is not None:
            out.append({"method": "upper bound", "kind": "human", "k": None, **self.upper_bound.as_dict(),
                        "images": self.upper_bound.n})
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
             seed: int = 0, per_image: bool = False, evalset: EvalSet | None = None,
             empty_descriptions: str = "count", upper_bound: bool = True,
             single_descriptions: str = "score") -> Report:
    """Score the upper bound, the baselines at every k, and systems' captions on ``eval_items``.

    The defaults are equation 1 as the paper writes it: every description is
    one of the M gold descriptions, also one that mentions no box
    (``empty_descriptions="count"``), and every image with a box and a
    description that mentions one is scored, also one with a single gold
    description (``single_descriptions="score"``); the upper bound (one
    description against the others) is then the mean over the images with at
    least two, counted in ``meta["upper_bound_images"]``. The other
    conventions: ``empty_descriptions="drop"`` leaves such descriptions out
    of M (see :mod:`.metric`), and ``single_descriptions="skip"`` (with
    ``upper_bound``) scores only images with two or more, so that every row
    is averaged over the same images. Only the textual
    baselines need priors: from ``priors``, learned from ``train_items``, or,
    when neither is given, leave-one-image-out — each image ranked with the
    counts of every other one of ``eval_items`` (exact: the image's own
    counts are subtracted). The random baseline pools ``runs`` random orders
    per image (every (image, run) pair is one observation, so its sd is that
    of a single run). A system's image without a caption, or whose caption
    has no correspondences, counts as an empty selection (P = R = F = 0). A
    system whose stored mentions point at a box its item does not have is
    left out of ``systems`` and named, with the caption, in
    ``meta["systems_skipped"]``; ``meta["systems_without_mentions"]`` names
    systems none of whose captions has a correspondence (their scores are
    all 0).
    """
    _check_conventions(empty_descriptions, single_descriptions)
    baselines = tuple(baselines)
    ks_arr = np.asarray(parse_ks(list(ks)), dtype=np.int64)
    es = _eval_set(eval_items, evalset, empty_descriptions, single_descriptions, upper_bound)
    meta: dict = _meta(es, empty_descriptions, single_descriptions, upper_bound, ks_arr, runs, seed)

    pa, held, baselines_skipped = _prior_arrays(eval_items, train_items, priors, baselines, es, meta)
    baselines = tuple(b for b in baselines if b not in baselines_skipped)
    if baselines_skipped:
        meta["baselines_skipped"] = baselines_skipped

    per: dict[str, np.ndarray] | None = {} if per_image else None  # the per-image scores, when asked for
    results = _score_baselines(es, baselines, pa, held, ks_arr, runs, seed, per)
    upper, meta["upper_bound_images"] = _score_upper_bound(es, per) if upper_bound else (None, 0)
    sys_scores = _score_systems(es, systems, empty_descriptions, meta, per)
    return Report(upper, results, sys_scores, tuple(int(k) for k in ks_arr), [it.key for it in es.items], meta,
                  per, dict(es.skip_reasons), MentionStats.of(es))


def _check_conventions(empty_descriptions: str, single_descriptions: str) -> None:
    """InputError on an unknown convention for descriptions without mentions or images with one description."""
    if empty_descriptions not in EMPTY_DESCRIPTIONS:
        raise InputError(f"unknown choice {empty_descriptions!r} for descriptions without box mentions; "
                         f"choose {' or '.join(EMPTY_DESCRIPTIONS)}", "--empty-descriptions")
    if single_descriptions not in SINGLE_DESCRIPTIONS:
        raise InputError(f"unknown choice {single_descriptions!r} for images with a single gold description; "
                         f"choose {' or '.join(SINGLE_DESCRIPTIONS)}", "--single-descriptions")


def _eval_set(eval_items, evalset: EvalSet | None, empty_descriptions: str, single_descriptions: str,
              upper_bound: bool) -> EvalSet:
    """The compiled evaluation set for these conventions (``evalset`` when it was compiled with them)."""
    min_descriptions = 2 if upper_bound and single_descriptions == "skip" else 1
    if evalset is None:
        return compile_items(eval_items, empty_descriptions=empty_descriptions, min_descriptions=min_descriptions)
    if (evalset.empty_descriptions, evalset.min_descriptions) != (empty_descriptions, min_descriptions):
        raise ValueError("the evaluation set was compiled with other settings than evaluate() was given")
    return evalset


def _meta(es: EvalSet, empty_descriptions: str, single_descriptions: str, upper_bound: bool, ks_arr: np.ndarray,
          runs: int, seed: int) -> dict:
    """The report's account of what was scored: images and why any were left out, descriptions, settings."""
    reasons = {r: 0 for r in SKIP_REASONS}
    for r in es.skip_reasons.values():
        reasons[r] += 1
    return {"images": len(es), "skipped_images": len(es.skipped),
            "skipped_by_reason": {r: c for r, c in reasons.items() if c},
            "unknown_gold_box_ids": es.unknown_gold_ids, "empty_descriptions": empty_descriptions,
            "descriptions": int(es.descriptions.sum()),
            "descriptions_without_mentions": int(es.without_mentions.sum()),
            "single_descriptions": single_descriptions,
            "single_description_images": sum(int((g.valid.sum(axis=1) < 2).sum()) for g in es.groups),
            "upper_bound": upper_bound, "ks": [int(k) for k in ks_arr], "random_runs": runs, "seed": seed}


def _score_baselines(es: EvalSet, baselines: tuple[str, ...], pa, held, ks_arr: np.ndarray, runs: int, seed: int,
                     per: dict | None) -> dict[str, dict[int, Scores]]:
    """Each baseline's scores at every k (the random one pooled over ``runs`` orders); per image into ``per``
    (the first run) when it is given."""
    n_img, n_k = len(es), len(ks_arr)
    results: dict[str, dict[int, Scores]] = {}
    for name in baselines:
        n_runs = runs if name == "random" else 1
        prf = np.zeros((n_runs, n_img, n_k, 3))
        for g in es.groups:
            for run in range(n_runs):
                ranking = rank_group(name, g, pa, seed=seed, run=run, held_out=held.get(g.n) if held else None)
                p, r, f = score_ranking(g, ranking, ks_arr)
                prf[run, g.idx] = np.stack([p, r, f], axis=-1)
        # n counts images, also for the pooled random runs.
        results[name] = {int(k): replace(summarise(prf[:, :, j, 0], prf[:, :, j, 1], prf[:, :, j, 2]), n=n_img)
                         for j, k in enumerate(ks_arr)}
        if per is not None:
            per[name] = prf[0]
    return results


def _score_upper_bound(es: EvalSet, per: dict | None) -> tuple[Scores, int]:
    """The human upper bound over the images with two or more gold descriptions, and how many there are; per image
    into ``per`` (NaN where undefined) when it is given."""
    ub = np.full((len(es), 3), np.nan)
    for g in es.groups:
        p, r, f, _ = upper_bound_group(g)
        two = g.valid.sum(axis=1) >= 2   # one description against the others needs two
        ub[g.idx[two]] = np.stack([p, r, f], axis=-1)[two]
    defined = ~np.isnan(ub[:, 0])
    if per is not None:
        per["upper_bound"] = ub
    return summarise(ub[defined, 0], ub[defined, 1], ub[defined, 2]), int(defined.sum())


def _score_systems(es: EvalSet, systems: Iterable[str], empty_descriptions: str, meta: dict,
                   per: dict | None) -> dict[str, Scores]:
    """Each system's captions scored by the boxes they mention; what was missing or skipped into ``meta``, per
    image into ``per`` (as ``system:<name>``) when it is given."""
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
        prf = np.zeros((len(es), 3))
        for j, ids in enumerate(chosen):
            if ids is not None:
                prf[j] = score_selection(ids, gold_sets(es.items[j]), empty_descriptions=empty_descriptions)
        sys_scores[name] = summarise(prf[:, 0], prf[:, 1], prf[:, 2])
        missing[name] = sum(ids is None for ids in chosen)
        if chosen and not any(ids for ids in chosen):
            unmarked.append(name)
        if per is not None:
            per[f"system:{name}"] = prf
    if systems:
        meta["system_captions_missing"] = missing
        meta["systems_skipped"] = skipped
        meta["systems_without_mentions"] = unmarked
    return sys_scores


def _prior_arrays(eval_items, train_items, priors, baselines, es: EvalSet, meta: dict):
    """Priors for the textual baselines among ``baselines``: (PriorArrays, held-out counts by group, skipped).

    Records where they come from in ``meta["priors"]``; with leave-one-image-out
    and fewer than two images whose descriptions mention boxes, the textual
    baselines are skipped with the reason rather than ranked on nothing.
    """
    textual = [b for b in baselines if needs_priors(b)]
    if not textual:
        meta["priors"] = None
        return None, None, {}
    if priors is not None or train_items is not None:
        if priors is None:
            priors = learn_priors(train_items)
        if priors.descriptions == 0:
            raise InputError("the textual baselines need training images whose descriptions mention boxes; "
                             "none were found (choose another training project, or leave the textual baselines out)")
        meta["priors"] = {"source": "training", "images": priors.images, "descriptions": priors.descriptions}
        return PriorArrays(*priors.arrays(es.vocab)), None, {}
    pa, held, counted = leave_one_out(es, eval_items)
    meta["priors"] = {"source": LEAVE_ONE_OUT, "images": counted.images, "descriptions": counted.descriptions}
    if counted.images < 2:
        reason = ("leave-one-image-out priors need descriptions that mention boxes in at least two images; "
                  "give a training project")
        return None, None, {b: reason for b in textual}
    return pa, held, {}


def _system_selections(items: Sequence[Item], system: str) -> list[frozenset[str] | None]:
    """Per item, the box ids ``system``'s caption mentions (None: no caption); InputError on an unknown box."""
    out: list[frozenset[str] | None] = []
    for item in items:
        cap = _caption_of(item, system)
        out.append(None if cap is None else mentioned_box_ids(caption_mentions(cap, item)))
    return out


def evaluate_project(project: Project, *, train_project: Project | None = None, baselines: Iterable[str] = BASELINES,
                     ks: Iterable[int] = DEFAULT_KS, systems: Iterable[str] | None = (), runs: int = DEFAULT_RUNS,
                     seed: int = 0, per_image: bool = False, empty_descriptions: str = "count",
                     upper_bound: bool = True, single_descriptions: str = "score") -> Report:
    """Evaluate every scorable image of ``project`` (see :func:`evaluate`).

    The textual baselines take their priors from ``train_project`` or, without
    one, leave one image out of ``project``. ``systems=None`` means all the
    project's systems.
    """
    if systems is None:
        systems = project.systems
    unknown = [s for s in systems if s not in project.systems]
    if unknown:
        raise InputError(f"project {project.name!r} has no captions from system {unknown[0]!r}", "--system")
    if train_project is not None and train_project.name == project.name:
        raise InputError(f"the training project is the evaluated project {project.name!r}: its own descriptions "
                         "would be among the priors; leave the training project out to rank each image with the "
                         "counts of the other images", "--train-project")
    if train_project is not None:
        shared = shared_images(project, train_project)
        if shared:
            shown = ", ".join(repr(s) for s in shared[:3]) + (" …" if len(shared) > 3 else "")
            raise InputError(f"{len(shared)} of the {len(project.items)} evaluated images of {project.name!r} are also "
                             f"images of the training project {train_project.name!r} ({shown}): their own descriptions "
                             "would be among the priors; give a training project without them, or leave it out to "
                             "rank each image with the counts of the other images", "--train-project")
    report = evaluate(project.items, None if train_project is None else train_project.items, baselines=baselines,
                      ks=ks, systems=systems, runs=runs, seed=seed, per_image=per_image,
                      empty_descriptions=empty_descriptions, upper_bound=upper_bound,
                      single_descriptions=single_descriptions)
    if report.meta.get("priors") and train_project is not None:
        report.meta["priors"]["project"] = train_project.name
    report.meta = {"project": project.name, **report.meta}
    return report


def _image_name(item) -> str:
    """An image's file name (its key when it has no file), the same across projects with other image roots."""
    return PurePath(str(item.image or item.key)).name.lower()


def shared_images(project: Project, train_project: Project) -> list[str]:
    """The image file names ``project`` shares with ``train_project`` (sorted)."""
    return sorted({_image_name(i) for i in project.items} & {_image_name(i) for i in train_project.items})


def scope_lines(report: Report) -> list[str]:
    """Plain sentences on what a report's rows were computed over: images, priors, gold descriptions.

    The CLI prints them and the page shows them, so both say the same.
    """
    m = report.meta
    n = m["images"]
    same = m.get("upper_bound") and m.get("upper_bound_images", n) == n
    rows = "the upper bound, every baseline and every system" if same else "every baseline and system"
    lines = [f"{n} images scored: {rows} averaged over these same {n} images."]
    if m.get("upper_bound") and not same:
        lines.append(f"The upper bound (one description against the others) is averaged over the "
                     f"{m['upper_bound_images']} of them with two or more gold descriptions; "
                     f"{n - m['upper_bound_images']} {'has' if n - m['upper_bound_images'] == 1 else 'have'} a single one and "
                     "are scored as equation 1 is written "
                     "(--single-descriptions skip leaves them out of every row).")
    if m["skipped_images"]:
        by_reason = m.get("skipped_by_reason", {})
        parts = [f"{r}: {c}" for r, c in by_reason.items()]
        hint = (" Images with a single gold description were left out (--single-descriptions skip) so that the "
                "upper bound is defined on every scored image." if SKIP_REASONS[2] in by_reason else "")
        lines.append(f"{m['skipped_images']} images skipped ({'; '.join(parts)}).{hint}")
    pri = m.get("priors")
    if pri and pri["source"] == LEAVE_ONE_OUT:
        lines.append("Textual priors: leave-one-image-out — each image is ranked with the counts of the descriptions "
                     f"of the project's other images ({pri['descriptions']} descriptions of {pri['images']} images in "
                     "all, the image's own taken out).")
    elif pri:
        source = f"project {pri['project']!r}" if "project" in pri else "the training images"
        lines.append(f"Textual priors: from {source} ({pri['descriptions']} descriptions of {pri['images']} images).")
    for name, reason in m.get("baselines_skipped", {}).items():
        lines.append(f"Baseline {name} not scored: {reason}.")
    st = report.stats.corpus() if report.stats else None
    dropped = m["descriptions_without_mentions"]
    how = ("left out of M (--empty-descriptions drop; the default counts them in M with no instance, as equations 1 "
           "and 2 are written)" if m["empty_descriptions"] == "drop"
           else "counted in M with no instance, as equations 1 and 2 are written (the default; --empty-descriptions "
                "drop leaves them out)")
    line = f"Gold descriptions in M: {m['descriptions']}"
    if st and st["instances_per_description"] is not None:
        line += (f"; unique instances mentioned per description {st['instances_per_description']:.2f} "
                 f"± {st['instances_per_description_sd']:.2f} (mean of the images' means "
                 f"{st['image_mean_instances_per_description']:.2f})")
    lines.append(line + ".")
    lines.append(f"Descriptions that mention no box: {dropped}, {how}.")
    return lines


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
                  seed: int = 0, run: int = 0, sentence_seed: int = 0, empty_descriptions: str = "count") -> Choice:
    """The boxes ``method`` (a baseline name or ``system:NAME``) chooses for one image, and its score.

    Uses the same ranking code as :func:`evaluate`, so the choice matches
    the evaluation (for ``random``, run ``run`` of ``seed``; for a textual
    baseline scored leave-one-image-out, pass
    :func:`.priors.held_out_priors` of the corpus priors and the item).
    """
    golds = gold_sets(item)
    score = partial(score_selection, gold_sets=golds, empty_descriptions=empty_descriptions)
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
        return Choice(method, None, chosen, chosen, score(chosen), sentence)
    if method not in BASELINES:
        raise InputError(f"unknown method {method!r}")
    if k is None or k < 1:
        raise InputError("k must be at least 1")
    es = compile_items([item], require_gold=False)
    if not es.groups:
        return Choice(method, k, (), (), score(()), "")
    pa = None
    if needs_priors(method):
        if priors is None or priors.descriptions == 0:
            raise InputError(f"the {method} baseline needs textual priors learned from training descriptions")
        pa = PriorArrays(*priors.arrays(es.vocab))
    ranking = rank_group(method, es.groups[0], pa, seed=seed, run=run)
    order = [item.boxes[j].box_id for j in ranking.order[0]]
    chosen = tuple(order[:min(k, int(ranking.length[0]))])
    sentence = realise([item.box(b) for b in chosen], seed=sentence_seed)
    return Choice(method, k, chosen, tuple(order[:int(ranking.length[0])]), score(chosen), sentence)
