"""SPICE 1.0 through the jar coco-caption ships, when the Stanford CoreNLP 3.6.0 jars are present.

SPICE parses every caption and reference into a scene graph (objects,
attributes, relations) with Stanford CoreNLP 3.6.0 and scores a caption by
the F-measure of its graph tuples against the union of its references'
tuples (WordNet synonyms match). The corpus score is the mean of the
captions' F-measures, as pycocoevalcap's ``Spice.compute_score`` computes it
(numpy's mean; a caption whose F is undefined makes it NaN there and here).

pycocoevalcap ships ``spice-1.0.jar`` and every library it needs except the
two CoreNLP jars (``stanford-corenlp-3.6.0.jar`` and
``stanford-corenlp-3.6.0-models.jar``), which it downloads on first use; that
download cannot happen here. They are looked for where pycocoevalcap looks,
its ``spice/lib`` folder (``get_stanford_models`` checks for
``lib/stanford-corenlp-3.6.0.jar``), or in the folder named by the
environment variable :data:`CORENLP_ENV`. Without them (or without Java)
the metric is reported unavailable with the reason, like METEOR without Java.

Each scoring call runs the jar once on a temporary JSON file (``-subset
-silent``, as pycocoevalcap runs it; ``-Xmx`` from ``ANNOTATOR_SPICE_MEMORY``,
default 8G as pycocoevalcap) and reads its JSON output with
:func:`parse_output`. A caption's score depends on its own references only, so
rescoring changed captions runs the jar on those captions alone. SPICE is not
in the default metric set: parsing takes seconds per hundred captions.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from pathlib import Path

from .base import MeanScoreMetric, Prepared, Setting
from ..errors import MetricInputError, MetricUnavailable
from ..java import cocoeval_dir, java_executable

#: Environment variable naming a folder that holds the two CoreNLP 3.6.0 jars.
CORENLP_ENV = "ANNOTATOR_SPICE_CORENLP"
#: The jars SPICE's manifest expects next to it in lib/ and that pycocoevalcap does not ship.
CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
MAIN_CLASS = "edu.anu.spice.SpiceScorer"


def spice_dir() -> Path:
    """pycocoevalcap's spice folder (``spice-1.0.jar`` and ``lib/``)."""
    return cocoeval_dir() / "spice"


def corenlp_dir() -> Path:
    """The folder holding the CoreNLP 3.6.0 jars: :data:`CORENLP_ENV` if set, else pycocoevalcap's ``spice/lib``.

    Raises MetricUnavailable naming what is missing and where to put it.
    """
    env = os.environ.get(CORENLP_ENV, "").strip()
    folder = Path(env) if env else spice_dir() / "lib"
    missing = [j for j in CORENLP_JARS if not (folder / j).is_file()]
    if missing:
        where = f"the folder {CORENLP_ENV} names ({folder})" if env else f"{folder}"
        raise MetricUnavailable(
            f"SPICE needs the Stanford CoreNLP 3.6.0 jars, and {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not in {where}; they come in stanford-corenlp-full-2015-12-09.zip "
            f"and cannot be downloaded here: copy both into pycocoevalcap's spice/lib folder or into a folder named "
            f"by {CORENLP_ENV}")
    return folder


def classpath() -> str:
    """The class path SPICE runs with: its jar, pycocoevalcap's lib jars and the CoreNLP jars."""
    base = spice_dir()
    jar = base / "spice-1.0.jar"
    if not jar.is_file():
        raise MetricUnavailable(f"SPICE's jar is missing: {jar} (it ships with pycocoevalcap)")
    corenlp = corenlp_dir()
    parts = [jar, *(corenlp / j for j in CORENLP_JARS), *sorted((base / "lib").glob("*.jar"))]
    return os.pathsep.join(dict.fromkeys(str(p) for p in parts))


def _number(value) -> float:
    # as pycocoevalcap's float_convert: anything that is not a number (null, "NaN") is NaN
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def parse_output(data, n: int) -> list[dict[str, dict[str, float]]]:
    """Per-caption scores from SPICE's JSON output (a parsed list, or its text), for captions ``0 … n-1``.

    Each element of the output carries ``image_id`` (here the caption's
    position) and ``scores``: per category (``All``, ``Object``,
    ``Attribute``, ``Relation``, ``Color``, ``Count``, ``Size``,
    ``Cardinality``) the precision ``pr``, recall ``re``, F-measure ``f`` and
    the tuple counts. Returns one ``{category: {field: float}}`` per caption
    in order (null and non-numbers as NaN). MetricInputError when the output
    does not hold exactly the captions sent.
    """
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise MetricInputError(f"SPICE's output is not JSON: {exc}") from None
    if not isinstance(data, list):
        raise MetricInputError("SPICE's output is not a list of captions")
    by_id: dict[int, dict] = {}
    for k, entry in enumerate(data):
        try:
            cid, scores = int(entry["image_id"]), entry["scores"]
        except (KeyError, TypeError, ValueError):
            raise MetricInputError(f"SPICE's output entry {k} has no image_id or scores") from None
        if cid in by_id:
            raise MetricInputError(f"SPICE's output has caption {cid} twice")
        if not isinstance(scores, dict) or not isinstance(scores.get("All"), dict):
            raise MetricInputError(f"SPICE's output for caption {cid} has no 'All' scores")
        by_id[cid] = {cat: {f: _number(v) for f, v in fields.items()} for cat, fields in scores.items()
                      if isinstance(fields, dict)}
    if sorted(by_id) != list(range(n)):
        raise MetricInputError(f"SPICE's output has {len(by_id)} captions for the {n} sent")
    return [by_id[i] for i in range(n)]


def run_spice(hyps: list[str], refs: list[list[str]]) -> list[dict[str, dict[str, float]]]:
    """Run the SPICE jar on caption ``i`` against ``refs[i]``; return :func:`parse_output` of its result."""
    java = java_executable()
    cp = classpath()
    memory = os.environ.get("ANNOTATOR_SPICE_MEMORY", "8G")
    with tempfile.TemporaryDirectory(prefix="annotator-spice-") as tmp:
        src, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps([{"image_id": i, "test": h, "refs": list(r)}
                                   for i, (h, r) in enumerate(zip(hyps, refs))]), encoding="utf-8")
        proc = subprocess.run([java, f"-Xmx{memory}", "-cp", cp, MAIN_CLASS, str(src), "-out", str(out),
                               "-subset", "-silent"], cwd=str(spice_dir()), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, check=False)
        if proc.returncode != 0 or not out.exists():
            raise MetricUnavailable(f"SPICE failed (exit {proc.returncode}): "
                                    f"{proc.stderr.decode('utf-8', 'replace')[-800:].strip() or '(no error output)'}")
        return parse_output(out.read_text(encoding="utf-8"), len(hyps))


#: The fields of SPICE's signature.
SETTINGS = (Setting("version", "1.0", "the spice-1.0.jar coco-caption ships"),
            Setting("corenlp", "3.6.0", "the Stanford CoreNLP release that parses captions into scene graphs"),
            Setting("subset", "yes", "per-category scores kept, as pycocoevalcap runs it"))


class Spice(MeanScoreMetric):
    """SPICE: scene-graph tuple F-measure per caption, the corpus score their mean (see the module documentation).

    Run by another process and slow, so neither in the default set nor in the live views.
    """

    key, label, settings, score_keys = "spice", "SPICE", SETTINGS, ("SPICE",)
    reference = "pycocoevalcap.spice.spice:Spice"
    description = "F-measure of the propositions (objects, attributes, relations) of caption and reference scene graphs."
    citation = "Anderson, Fernando, Johnson and Gould. SPICE: Semantic Propositional Image Caption Evaluation. ECCV 2016."
    link = "https://arxiv.org/abs/1607.08822"
    default = in_process = False

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why SPICE cannot run here (no Java, no SPICE jar, no CoreNLP 3.6.0 jars), or None."""
        try:
            java_executable()
        except MetricUnavailable:
            return "SPICE needs Java: no `java` executable on PATH (install a Java runtime)"
        try:
            classpath()
        except MetricUnavailable as exc:
            return str(exc)
        return None

    def _prepare(self, tok_refs: list[list[str]], samples=None):
        return tok_refs

    def _segments(self, toks: list[str], prep: Prepared, indices: list[int]):
        if not toks:
            return []
        scores = run_spice(toks, [prep.data[i] for i in indices])
        return [[s["All"].get("f", math.nan)] for s in scores]

    def _segment(self, hyp: str, prep: Prepared, index: int):
        return self._segments([hyp], prep, [index])[0]


__all__ = ["Spice", "CORENLP_ENV", "CORENLP_JARS", "spice_dir", "corenlp_dir", "classpath", "parse_output", "run_spice"]
