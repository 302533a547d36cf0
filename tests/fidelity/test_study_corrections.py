"""The guards against the error-analysis study's own released corrections (read from ANNOTATOR_STUDY_DATA):
``import corrections --dry-run`` of its five corrected copies refuses at most 6 of the 608 changed lines, and the
ones it refuses are those docs/correction.md names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.io import import_corrections
from annotator.store.corrections import current_corrections_frame
from tests.store_helpers import lines_project

# The study's released files are not part of this repository (they are another project's data): the tests read them
# from ANNOTATOR_STUDY_DATA, a folder holding the study's generated.txt, its five <type>_fixed.txt copies, reference0-4
# and metrics/<name>.metrics (see docs/correction.md for where they come from), and are skipped without it.
STUDY = Path(os.environ.get("ANNOTATOR_STUDY_DATA", "/nonexistent"))
pytestmark = pytest.mark.skipif(not (STUDY / "generated.txt").is_file(),
                                reason="the study's released files are not here (set ANNOTATOR_STUDY_DATA)")
FILES = {"activity": "activity", "color-of-clothing": "clothing_color", "gender": "gender",
         "scene-event-location": "scene", "type-of-clothing": "clothing_type"}
#: The study's corrections that no word-class rule can tell from a forbidden edit (docs/correction.md).
DOCUMENTED = {("activity", 313), ("clothing_color", 506), ("clothing_color", 774), ("scene", 174), ("scene", 977)}


@pytest.fixture
def study(store, tmp_path):
    generated = (STUDY / "generated.txt").read_text(encoding="utf-8").splitlines()
    lines_project(store, tmp_path, generated, generated, project="study", system="sat")
    return store


def test_the_study_corrections_are_accepted_but_for_the_documented_few(study, capsys):
    refused, changed = set(), 0
    for name, type_id in FILES.items():
        result = import_corrections(study, "study", "sat", type_id, STUDY / f"{name}_fixed.txt", dry_run=True)
        changed += result.corrections + len(result.refused)
        refused |= {(type_id, n) for n, _ in result.refused}
    with capsys.disabled():
        print(f"\nthe study's released corrections: {len(refused)} of {changed} refused by the guards")
    assert changed == 608
    assert len(refused) <= 6 and refused == DOCUMENTED
    assert current_corrections_frame(study, "study").empty  # a dry run stores nothing


def test_the_cli_dry_run_lists_every_refused_line_with_its_rule(study, capsys):
    rc = main(["--db", study.url, "import", "corrections", "--project", "study", "--system", "sat",
               "--error-type", "clothing_color", "--captions", str(STUDY / "color-of-clothing_fixed.txt"),
               "--dry-run"])
    out = capsys.readouterr().out
    assert rc == 0 and "dry run (nothing stored)" in out and "185 corrections would be stored" in out
    assert "line 506: refused by the colour guard" in out and "'pole'" in out
    assert "line 774: refused by the colour guard" in out and "'umbrella'" in out
    assert current_corrections_frame(study, "study").empty
