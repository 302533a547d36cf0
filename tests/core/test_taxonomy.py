"""The taxonomy data file: complete, consistent, and the aliases other tools use."""

from __future__ import annotations

import pytest

from annotator.errors import InputError
from annotator.taxonomy import ERROR_TYPE_IDS, load_taxonomy, taxonomy

# The labels the original error-analysis tool wrote, and the ids they must map to.
LEGACY = {
    "age": "age", "gender": "gender", "type of clothing": "clothing_type", "color of clothing": "clothing_color",
    "wrong-subject": "subject_wrong", "similar-subject": "subject_similar", "inexistent-subject": "subject_nonexistent",
    "extra subject": "subject_extra", "wrong-object": "object_wrong", "similar-object": "object_similar",
    "inexistent-object": "object_nonexistent", "extra object": "object_extra", "stance": "stance",
    "activity": "activity", "position": "position", "number": "number", "scene/event/location": "scene",
    "color": "color", "other": "other", "generally unrelated": "unrelated",
}


def test_the_study_types_in_four_groups():
    # The study's 20 types, in its order and groups; a project may append types of its own (data only).
    tax = taxonomy()
    assert tax.ids == ERROR_TYPE_IDS
    assert tax.ids[:20] == tuple(LEGACY.values())
    assert tax.groups == ("People", "Subject", "Object", "General")
    assert [t.group for t in tax.types[:20]] == ["People"] * 4 + ["Subject"] * 4 + ["Object"] * 4 + ["General"] * 8


def test_every_type_is_documented():
    for t in taxonomy().types:
        assert len(t.definition) > 30, t.id
        assert t.example_caption and t.example_note, t.id
        assert len(t.key) == 1, t.id


@pytest.mark.parametrize("label,type_id", sorted(LEGACY.items()))
def test_legacy_labels_resolve(label, type_id):
    assert taxonomy().resolve(label) == type_id
    assert taxonomy().resolve("  " + label.upper() + " ") == type_id


def test_unknown_label_is_an_input_error():
    with pytest.raises(InputError, match="fine.json, line 3: unknown error type label 'bogus'"):
        taxonomy().resolve_strict("bogus", "fine.json", 3)
    with pytest.raises(InputError):
        taxonomy().validate_ids(["age", "nope"])
    assert taxonomy().validate_ids(["color", "age", "age"]) == ("age", "color")


def test_keys_are_unique_and_not_the_task_keys():
    tax = taxonomy()
    keys = [t.key for t in tax.types]
    assert len(set(keys)) == len(keys)
    assert tax.accurate_key not in keys and tax.inaccurate_key not in keys


def test_broken_taxonomy_file_is_reported(refuses):
    refuses(load_taxonomy, "t.toml",
            '[meta]\ngroups=["People"]\n[[type]]\nid="x"\nbit=0\nname="X"\ngroup="Elsewhere"\nkey="1"\ndefinition="d"\n',
            "group 'Elsewhere'")
    refuses(load_taxonomy, "t.toml", "not toml [", "cannot read taxonomy")
