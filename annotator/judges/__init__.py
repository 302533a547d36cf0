"""AI judges: outputs of any judge as data, measured against the humans, and used for whole-test-set estimates.

* :mod:`.outputs`: what a judge says about a caption (:class:`JudgeOutput`), a stored judge
  (:class:`JudgeOutputs`), the built-in detectors as a judge (:class:`DetectorJudge`) and the scores every
  estimate reads (:class:`JudgeScores`);
* :mod:`.calibration`: how far to trust a judge (the :class:`~annotator.judges.calibration.JudgeReport` the
  command line, the Judges page and the JSON read);
* :mod:`.prompt` and :mod:`.runner`: asking a vision-language model through an OpenAI-compatible endpoint
  (``annotator judge run``);
* :mod:`.suggestions`: pre-filling the annotate panel from a judge, and where that is never done.

Judge files (``annotator import judge``) are read in :mod:`annotator.exchange.judge_files`.
"""

from __future__ import annotations

from .outputs import (DETECTORS, INACCURATE, THRESHOLD, DetectorJudge, JudgeOutput, JudgeOutputs, JudgeScores,
                      check_judge_name, signature_text)

__all__ = ["DETECTORS", "INACCURATE", "THRESHOLD", "DetectorJudge", "JudgeOutput", "JudgeOutputs", "JudgeScores",
           "check_judge_name", "signature_text", "judge_names", "load_judge", "load_judges"]


def judge_names(store, project: str) -> list[str]:
    """Every judge of a project: ``detectors`` first, then the stored judges by name."""
    from ..store.judges import project_judges
    from ..store.projects import project_id
    with store.read() as conn:
        return [DETECTORS] + [j.name for j in project_judges(conn, project_id(conn, project))]


def load_judge(store, project: str, name: str):
    """The judge called ``name`` in ``project``: the built-in :class:`DetectorJudge` for ``detectors``, else the
    stored :class:`JudgeOutputs` (NotFound naming the judges there are)."""
    from ..store.judges import judge_output_rows
    from ..store.projects import project_id
    if name == DETECTORS:
        return DetectorJudge()
    with store.read() as conn:
        stored, rows = judge_output_rows(conn, project_id(conn, project), name)
    outputs = {r[0]: JudgeOutput.from_row(r) for r in rows}
    return JudgeOutputs(stored.name, stored.signature, outputs, stored.source)


def load_judges(store, project: str, names=None) -> list:
    """Several judges (default: every judge of the project, the detectors first), each once, in the order given."""
    names = judge_names(store, project) if not names else list(dict.fromkeys(names))
    return [load_judge(store, project, n) for n in names]
