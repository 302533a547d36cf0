"""One team per user and project (annotator.team_selection): stand-in accounts left out of default teams unless
nobody else is there, a remembered team applied on Agreement, Adjudication, Error analysis and Rescoring, and
Assignment pre-selecting only annotators who can log in."""

from __future__ import annotations

import pandas as pd

from annotator.accounts.auth import UserInfo
from annotator.team_selection import (
    assignable_by_default, decode_team, default_team, encode_team, team_for, team_frame,
)


def test_default_team_leaves_stand_ins_out_unless_they_are_all_there_is():
    assert default_team(["ann", "local", "sample-ann", "zoe"], minimum=2) == ["ann", "zoe"]
    assert default_team(["ann", "sample-ann"], minimum=2) == ["ann", "sample-ann"]  # one real annotator: all
    assert default_team(["sample-ann", "sample-ben"], minimum=2) == ["sample-ann", "sample-ben"]  # the sample project
    assert default_team(["ann", "local"], minimum=1) == ["ann"]


def test_a_remembered_team_wins_when_enough_of_it_is_there():
    candidates = ["ann", "bob", "local", "zoe"]
    assert team_for(candidates, ["zoe", "local", "gone"], minimum=2) == ["local", "zoe"]  # chosen: kept
    assert team_for(candidates, ["zoe", "gone"], minimum=2) == ["ann", "bob", "zoe"]  # too few left: default
    assert team_for(candidates, None, minimum=1) == ["ann", "bob", "zoe"]
    assert team_for(candidates, [], minimum=1) == ["ann", "bob", "zoe"]
    assert decode_team(encode_team(["zoe", "ann", "zoe"])) == ["ann", "zoe"]
    assert decode_team("not json") == [] and decode_team('{"a": 1}') == [] and decode_team(None) == []


def test_assignment_preselects_annotators_who_can_log_in():
    users = [UserInfo("ann", "annotator", True, 0, None, True),
             UserInfo("imported", "annotator", False, 0, None, True),
             UserInfo("gone", "annotator", True, 0, None, False),
             UserInfo("sample-ann", "annotator", True, 0, None, True),
             UserInfo("lea", "lead", True, 0, None, True)]
    assert assignable_by_default(users) == ["ann"]


def test_team_frame_keeps_the_team_annotations_and_every_adjudication():
    frame = pd.DataFrame({"caption_id": [1, 1, 1, 2, 2],
                          "user": pd.Categorical(["ann", "local", "lea", "ann", "zoe"]),
                          "kind": pd.Categorical(["annotation", "annotation", "adjudication", "annotation",
                                                  "annotation"])})
    kept = team_frame(frame, ["ann", "zoe"])
    assert kept[["caption_id", "user"]].astype(str).values.tolist() == [["1", "ann"], ["1", "lea"], ["2", "ann"],
                                                                       ["2", "zoe"]]
