"""Content selection as the study defines it: WordNet senses are distinct concepts.

Hand-computed cases; the worked example (figure 2 of the study) is in test_content_selection_helpers.
"""

from __future__ import annotations

from test_content_selection_helpers import item

from annotator.content_selection import evaluate, explain_image, learn_priors
from annotator.model import Box, Item


def test_wordnet_senses_are_distinct_concepts():
    # Training: three descriptions mention the computer mouse (mouse.n.04), none the animal (mouse.n.01).
    train = Item("t", width=100, height=100, boxes=[Box("1", "mouse", 0, 0, 5, 5, "mouse.n.04"),
                                                    Box("2", "desk", 0, 0, 90, 50, "desk.n.01")],
                 references=item("x", [], ["A [mouse|1] on a [desk|2]", "A [mouse|1]", "The [mouse|1]"]).references)
    pri = learn_priors([train])
    assert dict(pri.unigram) == {"mouse.n.04": 3, "desk.n.01": 1}
    # The evaluated image has the animal first, then the device: the unigram baseline picks the device.
    ev = Item("e", width=100, height=100, boxes=[Box("r", "mouse", 0, 0, 9, 9, "mouse.n.01"),
                                                 Box("c", "mouse", 50, 50, 9, 9, "mouse.n.04")],
              references=item("y", [], ["A [mouse|c]", "A computer [mouse|c]"]).references)
    choice = explain_image(ev, "unigram", 1, priors=pri)
    assert choice.selected == ("c",) and choice.scores == (1.0, 1.0, 1.0)
    assert choice.sentence == "[Mouse|c] ."        # the label is still what a sentence says
    assert evaluate([ev], [train], baselines=["unigram"], ks=[1]).baselines["unigram"][1].F == 1.0
    # A label written as a synset keeps its sense too; case and spaces do not make a new concept.
    it = item("l", [("1", "Mouse.n.01", 0, 0, 1, 1), ("2", " mouse.n.04 ", 0, 0, 1, 1)], ["[m|1]", "[m|2]"])
    assert dict(learn_priors([it]).unigram) == {"mouse.n.01": 1, "mouse.n.04": 1}
