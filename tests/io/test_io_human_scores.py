"""The human-score reader as a format: its declared options drive the command line, and its example file imports."""

from __future__ import annotations

import inspect
import json

import pytest

from annotator.cli import build_parser, main
from annotator.errors import InputError
from annotator.io import human_scores
from annotator.io.options import ReaderOption
from annotator.sample import SAMPLE_PROJECT, SAMPLE_SYSTEMS, load_sample
from annotator.store.human_scores import scores_frame


def test_declared_options_are_the_read_keywords():
    params = inspect.signature(human_scores.read).parameters
    assert human_scores.NAME == "human-scores" and human_scores.HELP
    for option in human_scores.OPTIONS:
        assert params[option.name].kind is inspect.Parameter.KEYWORD_ONLY
    assert ReaderOption("columns", "--columns", "", kind="list").value(" a, ,b ") == ["a", "b"]
    assert ReaderOption("columns", "--columns", "", kind="list").value(" , ") is None
    with pytest.raises(ValueError, match="'text' or 'list'"):
        ReaderOption("x", "--x", "", kind="number")


@pytest.mark.parametrize("command", [["human-scores", "import"], ["import", "human-scores"], ["correlate"]])
def test_command_line_takes_the_declared_flags(command):
    args = build_parser().parse_args([*command, "--project", "P", *(["F"] if command[0] != "correlate" else []),
                                      "--system", "S", "--name", "N", "--columns", "q, r"])
    assert (args.hs_system, args.hs_name, args.hs_columns) == ("S", "N", "q, r")


def test_reader_records_of_the_example():
    records = human_scores.read(human_scores.EXAMPLE)
    assert len(records) == 32
    assert {r.system for r in records} == set(SAMPLE_SYSTEMS)
    assert {r.name for r in records} == {"correctness", "detail"}
    first = records[0]
    assert (first.line, first.item, first.system, first.name, first.value) == (2, "astronaut.jpg", "sat-attn",
                                                                                "correctness", 2.0)
    with pytest.raises(InputError, match="a score name is needed"):
        human_scores.read(b"1\n2\n", system="sat-attn")


def test_example_file_imports_into_the_sample_project(store, capsys):
    load_sample(store, with_judgements=False)
    rc = main(["--db", store.url, "import", "human-scores", "--project", SAMPLE_PROJECT, str(human_scores.EXAMPLE),
               "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    summary = json.loads(out.out)
    assert (summary["values"], summary["captions"]) == (32, 16)
    frame = scores_frame(store, SAMPLE_PROJECT)
    hubble = frame[(frame["item_key"] == "hubble.jpg") & (frame["name"] == "correctness")].set_index("system")
    assert hubble.loc["nic-beam", "value"] == 5.0 and hubble.loc["sat-attn", "value"] == 1.0
