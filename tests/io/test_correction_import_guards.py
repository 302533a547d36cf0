"""``import corrections`` runs the guards of the Correction page: refused lines name line and rule; --reason
stores them with that reason, and the by-type table counts them per type."""

from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.errors import InputError
from annotator.io import import_corrections
from annotator.rescoring import by_type_table, format_by_type
from annotator.store.corrections import current_corrections_frame
from tests.store_helpers import lines_project, refused

CAPTIONS = ["A man is riding a horse on a beach .", "A woman in a red shirt is reading a book .",
            "A boy is holding a kite in a park ."]
REFS = ["A woman rides a horse along the beach .", "A man in a blue shirt reads a book .",
        "A girl flies a kite in the park ."]


@pytest.fixture
def project(store, tmp_path):
    lines_project(store, tmp_path, CAPTIONS, REFS)
    return store


def _file(tmp_path, lines):
    f = tmp_path / "fixed.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def test_a_gender_edit_that_changes_age_is_refused_naming_line_and_rule(project, tmp_path):
    # Line 1 is a proper gender swap; line 3 turns a boy into a woman (age changes too).
    fixed = _file(tmp_path, ["A woman is riding a horse on a beach .", CAPTIONS[1], "A woman is holding a kite in a park ."])
    exc = refused(project, lambda: import_corrections(project, "p", "sys", "gender", fixed), "fixed.txt",
                  "line 3", "gender guard", "'boy' → 'woman'")
    assert exc.location == 3


def test_a_whole_rewrite_is_refused(project, tmp_path):
    fixed = _file(tmp_path, ["Two dogs are playing in the snow .", CAPTIONS[1], CAPTIONS[2]])
    refused(project, lambda: import_corrections(project, "p", "sys", "gender", fixed), "line 1", "gender guard")


def test_the_cli_exits_2_and_stores_nothing(project, tmp_path, capsys):
    fixed = _file(tmp_path, ["A girl is riding a horse on a beach .", CAPTIONS[1], CAPTIONS[2]])
    rc = main(["--db", project.url, "import", "corrections", "--project", "p", "--system", "sys",
               "--error-type", "gender", "--captions", str(fixed)])
    err = capsys.readouterr().err
    assert rc == 2 and "line 1" in err and "gender guard" in err and "--reason" in err
    assert current_corrections_frame(project, "p").empty


def test_a_reason_stores_refused_lines_with_it_and_the_table_counts_them(project, tmp_path, capsys):
    fixed = _file(tmp_path, ["A woman is riding a horse on a beach .", CAPTIONS[1], "A woman is holding a kite in a park ."])
    rc = main(["--db", project.url, "import", "corrections", "--project", "p", "--system", "sys",
               "--error-type", "gender", "--captions", str(fixed), "--reason", "adult flying the kite"])
    assert rc == 0 and "1 of them past a guard" in capsys.readouterr().out
    df = current_corrections_frame(project, "p").sort_values("line_no")
    assert df["line_no"].tolist() == [0, 2]
    # Only the line that needed it carries the reason.
    assert [r if isinstance(r, str) else None for r in df["override_reason"]] == [None, "adult flying the kite"]
    out = by_type_table(project, "p", "sys", resamples=10, metrics=("Bleu_4", "CIDEr"))
    assert out.meta.overrides_by_type == {"gender": 1}
    assert "1 correction(s) were saved past a guard, with a reason (Gender 1)." in format_by_type(out)


def test_a_blank_reason_is_no_reason(project, tmp_path):
    fixed = _file(tmp_path, ["A girl is riding a horse on a beach .", CAPTIONS[1], CAPTIONS[2]])
    with pytest.raises(InputError, match="line 1"):
        import_corrections(project, "p", "sys", "gender", fixed, reason="   ")


def test_every_refused_line_is_listed_with_its_rule(project, tmp_path):
    # Lines 1 and 3 both break the gender guard: the message names both, not only the first.
    fixed = _file(tmp_path, ["A girl is riding a horse on a beach .", CAPTIONS[1], "A woman is holding a kite in a park ."])
    exc = refused(project, lambda: import_corrections(project, "p", "sys", "gender", fixed), "2 of 2 changed line(s)",
                  "line 1: refused by the gender guard", "'man' → 'girl'", "line 3: refused by the gender guard",
                  "'boy' → 'woman'")
    assert exc.location == 1


def test_a_dry_run_stores_nothing_and_lists_what_it_would_refuse(project, tmp_path, capsys):
    fixed = _file(tmp_path, ["A woman is riding a horse on a beach .", CAPTIONS[1], "A woman is holding a kite in a park ."])
    result = import_corrections(project, "p", "sys", "gender", fixed, dry_run=True)
    assert result.corrections == 1 and [n for n, _ in result.refused] == [3]
    assert current_corrections_frame(project, "p").empty
    rc = main(["--db", project.url, "import", "corrections", "--project", "p", "--system", "sys",
               "--error-type", "gender", "--captions", str(fixed), "--dry-run"])
    out = capsys.readouterr().out
    assert rc == 0 and "1 corrections would be stored" in out and "1 line(s) refused" in out
    assert "line 3: refused by the gender guard" in out
    assert current_corrections_frame(project, "p").empty
    from annotator.store.users import user_id
    from annotator.errors import NotFound
    with project.transaction() as conn, pytest.raises(NotFound):
        user_id(conn, "corrector")  # a dry run creates no user either
