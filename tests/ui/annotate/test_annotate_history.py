"""The history of a judgement on the annotate page: names instead of ids, whole text, escaped, UTC."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from annotator.model import Judgement, Label
from annotator.ui.annotate.html import history_html


def _cells(markup):
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", markup)]


def test_history_rows_read_as_words():
    long_note = "the man on the left holds a <b>kite</b> & not a flag; " * 6
    revisions = [
        Judgement(1, "ann1", None, (), "later", 3.04, revision=1,
                  created_at=datetime(2026, 3, 1, 10, 0, 5, tzinfo=timezone.utc)),
        Judgement(1, "ann1", Label.INACCURATE, ("subject_similar", "color"), long_note, 12.26, revision=2,
                  created_at=datetime(2026, 3, 1, 12, 30, 0, tzinfo=timezone(timedelta(hours=2)))),
        Judgement(1, "ann1", Label.ACCURATE, (), "", 1.0, revision=3,
                  created_at=datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)),
    ]
    markup = history_html(revisions)
    assert re.findall(r'<th scope="col">(.*?)</th>', markup) == ["Revision", "Judgement", "Error types", "Note", "Seconds",
                                                         "Saved at (UTC)"]
    rows = _cells(markup)
    assert rows[0] == ["1", "Skipped", "", "later", "3.0", "2026-03-01 10:00:05"]
    assert rows[1][:3] == ["2", "Inaccurate", "Similar subject, Color"]  # names, never ids
    assert rows[1][3] == long_note.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # whole, escaped
    assert rows[1][4:] == ["12.3", "2026-03-01 10:30:00"]  # converted to UTC
    assert rows[2][:2] == ["3", "Accurate"]
    assert "subject_similar" not in markup and "<b>" not in markup
