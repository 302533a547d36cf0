"""Error detectors: a constructed case per type, CHAIR by hand, the tokeniser, the sample project's answer key."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.config import SAMPLE_DIR
from annotator.estimate import (DETECTED_TYPES, INACCURATE, Evidence, detect, detector_quality, evidence_of_item,
                                load_lexicon)
from annotator.estimate.lexicon import normal_words, plural_forms, stem
from annotator.estimate.tokens import tokenise
from annotator.io.jsonl import read_jsonl_project
from annotator.sample import answer_key
from annotator.taxonomy import ERROR_TYPE_IDS


def five(*texts: str) -> tuple[str, ...]:
    """Five references: the given ones, repeated in order."""
    return tuple((texts * 5)[:5])


# type id -> (references, box labels, a caption with the error and its trigger words, a caption without it)
CASES = {
    "gender": (five("A woman rides a bike down a hill", "A woman on a bicycle", "A lady cycling"), (),
               "A man rides a bike down a hill", ["man"], "A woman rides a bike down a hill"),
    "age": (five("A man walks a dog in the park", "An adult man with his dog"), (),
            "A boy walks a dog in the park", ["boy"], "An old man walks a dog in the park"),
    "clothing_type": (five("A man in a red shirt reads a book", "A man wearing a red t-shirt reads"), (),
                      "A man in a red jacket reads a book", ["jacket"], "A man in a red tee reads a book"),
    "clothing_color": (five("A man in a red shirt reads a book", "A man wearing a red t-shirt reads"), (),
                       "A man in a blue shirt reads a book", ["blue"], "A man in a red shirt reads a book"),
    "color": (five("A brown dog runs on the grass", "A brown puppy running in a field"), (),
              "A black dog runs on the grass", ["black"], "A brown dog runs on the grass"),
    "subject_similar": (five("A cat sleeps on a sofa", "A kitten asleep on the couch"), ("cat", "sofa"),
                        "A dog sleeps on a sofa", ["dog"], "An animal sleeps on a sofa"),
    "subject_nonexistent": (five("A cat sleeps on a sofa", "A kitten asleep on the couch"), ("cat", "sofa"),
                            "A woman sleeps on a sofa", ["woman"], "A tabby cat sleeps on a sofa"),
    "subject_extra": (five("A man is cooking in a kitchen", "A cook stirs a pot"), ("man", "pot"),
                      "A man and a man are cooking in a kitchen", ["man"], "A man is cooking in a kitchen"),
    "subject_wrong": (five("A horse jumps over a fence", "A brown horse jumping a fence", "A horse leaps",
                           "A horse clears a fence", "A horse and a boy near a fence"), ("horse", "fence", "boy"),
                      "A boy stands near a fence", ["boy"], "A horse jumps over a fence"),
    "object_wrong": (five("A boy holds a red balloon next to a girl", "A boy with a balloon beside a girl"),
                     ("boy", "girl", "balloon"), "A boy is hugging a girl", ["girl"], "A boy holds a balloon"),
    "object_similar": (five("A man plays a banjo on a porch", "A man strumming a banjo"), ("man", "banjo"),
                       "A man plays a guitar on a porch", ["guitar"], "A man plays a banjo on a porch"),
    "object_nonexistent": (five("A man plays a banjo on a porch", "A man strumming a banjo"), ("man", "banjo"),
                           "A man plays a banjo with a dog", ["dog"], "A man plays a banjo"),
    "object_extra": (five("A man holds a tennis racket", "A tennis player with his racket"), ("man", "racket"),
                     "A man with a racket and a racket", ["racket"], "A man with a racket"),
    "stance": (five("A man sits on a step", "A man seated on the steps"), ("man", "steps"),
               "A man stands on a step", ["stands"], "A man sitting on a step"),
    "activity": (five("A dog lies in the grass chewing a stick", "A dog chews a stick on the lawn"), ("dog",),
                 "A dog runs through the grass", ["runs"], "A dog chewing a stick in the grass"),
    "position": (five("A dog sleeps under the table", "A dog asleep beneath a table"), ("dog", "table"),
                 "A dog sleeps on top of the table", ["on top of"], "A dog sleeps under the table"),
    "number": (five("Three men play instruments on a stage", "Three musicians playing"), ("man", "man", "man"),
               "Two men play instruments on a stage", ["men"], "Three men play instruments on a stage"),
    "scene": (five("Two people stand in a laboratory", "Two scientists in a lab"), ("person", "person"),
              "Two people stand in a hallway", ["hallway"], "Two people stand in a laboratory"),
    "unrelated": (five("A cat sleeps on a sofa", "A kitten asleep on the couch"), ("cat", "sofa"),
                  "A group of people standing in the snow", None, "A cat sleeps on a sofa"),
}


@pytest.fixture(scope="module")
def constructed():
    evidence, captions, items, expected = [], [], [], []
    for type_id, (refs, boxes, wrong, words, right) in CASES.items():
        evidence.append(Evidence(refs, boxes))
        item = len(evidence) - 1
        captions += [wrong, right]
        items += [item, item]
        expected.append((type_id, words))
    return detect(captions, items, evidence), expected


def test_every_detected_type_has_a_constructed_case():
    assert set(CASES) == set(DETECTED_TYPES)
    assert "other" not in DETECTED_TYPES and set(DETECTED_TYPES) | {"other"} == set(ERROR_TYPE_IDS)


@pytest.mark.parametrize("type_id", list(CASES))
def test_constructed_case_is_flagged_with_its_words(constructed, type_id):
    det, expected = constructed
    k = [t for t, _ in expected].index(type_id)
    wrong, right = 2 * k, 2 * k + 1
    assert det.score(type_id)[wrong] >= 0.5, det.triggers(wrong)
    assert det.score(type_id)[right] < 0.5, (CASES[type_id][4], det.triggers(right))
    words = expected[k][1]
    if words is not None:
        assert det.triggers(wrong, type_id) == {type_id: words}
    else:  # unrelated: every content word of the caption is unsupported
        assert set(det.triggers(wrong, type_id)[type_id]) >= {"people", "standing", "snow"}
    assert det.score(INACCURATE)[wrong] >= det.score(type_id)[wrong]
    assert det.triggers(wrong, INACCURATE)[INACCURATE]


def test_other_has_no_detector(constructed):
    det, _ = constructed
    assert not det.score("other").any()


def test_scores_are_in_the_unit_interval_and_inaccurate_is_the_maximum(constructed):
    det, _ = constructed
    assert det.scores.min() >= 0 and det.scores.max() <= 1
    types = det.scores[:, :len(ERROR_TYPE_IDS)]
    assert np.array_equal(det.score(INACCURATE), types.max(axis=1))
    df = det.frame()
    assert list(df.columns) == [*ERROR_TYPE_IDS, INACCURATE, "similarity"] and len(df) == 2 * len(CASES)


def test_contradiction_raises_the_score_above_plain_absence():
    refs_agree = Evidence(five("A woman on a bench", "A woman sits"))
    refs_silent = Evidence(five("A person on a bench", "Someone sits"))
    det = detect(["A man on a bench", "A man on a bench"], [0, 1], [refs_agree, refs_silent])
    agree, silent = det.score("gender")
    assert agree == pytest.approx(1.0) and silent == pytest.approx(0.5)


def test_more_general_words_are_supported_and_more_specific_ones_consistent():
    ev = Evidence(five("A tabby cat on a sofa"), ("cat",))
    det = detect(["An animal on a sofa", "A kitten on a sofa", "A pet on a couch"], [0, 0, 0], [ev])
    assert not det.score("subject_nonexistent").any() and not det.score("subject_similar").any()


def test_stance_needs_an_animate_subject_that_exists():
    ev = Evidence(five("A pagoda rises above a lake", "A tower by the water"), ("pagoda", "lake"))
    det = detect(["A pagoda stands above a lake", "A woman sits in front of a pagoda"], [0, 0], [ev])
    assert det.score("stance")[0] == 0  # a building "stands": no posture
    assert det.score("stance")[1] == 0 and det.score("subject_nonexistent")[1] >= 0.5  # no woman at all


def test_colour_before_a_garment_is_clothing_colour_and_otherwise_colour():
    ev = Evidence(five("A man in a red shirt next to a white car"))
    det = detect(["A man in a blue shirt next to a white car", "A man in a red shirt next to a green car"],
                 [0, 0], [ev])
    assert det.triggers(0) == {"clothing_color": ["blue"]}
    assert det.triggers(1) == {"color": ["green"]}


def test_chair_counts_every_entity_mention():
    ev = Evidence(five("A dog and a cat on a sofa"), ("dog", "cat", "sofa"))
    captions = ["A dog on a sofa", "A dog and a horse on a sofa", "A bird and a bird on a chair", "A sunny day"]
    det = detect(captions, [0, 0, 0, 0], [ev])
    assert list(det.entity_mentions) == [2, 3, 3, 0]
    # horse: a sibling of dog and cat (similar) is hallucinated too; bird is an animal but under "bird";
    # chair is a sibling of sofa under "seat"
    assert list(det.entity_hallucinated) == [0, 1, 3, 0]
    c = det.chair()
    assert (c.mentions, c.hallucinated, c.captions, c.captions_hallucinating) == (8, 4, 4, 2)
    assert c.chair_i == pytest.approx(4 / 8) and c.chair_s == pytest.approx(2 / 4)
    assert det.chair(np.array([0, 1])).chair_s == pytest.approx(0.5)


def test_tokeniser_matches_the_normal_form_of_each_text():
    texts = ["A man's T-shirt, on the BEACH.", "", "caf\u00e9 \u2014 two\u00a0dogs", "odd\x1fseparator inside",
             "  spaced   out  ", "Extraordinarily long na\u00efvet\u00e9 skateboarding, naïveté again"]
    tok = tokenise(texts)
    assert tok.n_texts == len(texts)
    for i, text in enumerate(texts):
        got = [tok.vocab[t] for t in tok.tok[tok.start[i]:tok.start[i + 1]]]
        assert got == normal_words(text.replace("\u2014", " ").replace("\u00a0", " ")), text


def test_stems_and_plurals():
    assert {stem(w) for w in ("smile", "smiles", "smiling", "smiled")} == {"smil"}
    assert {stem(w) for w in ("run", "runs", "running")} == {"run"}
    assert stem("kiss") == "kiss" and stem("kissing") == "kiss"
    assert plural_forms("bus", {}) == ["buses"] and plural_forms("puppy", {}) == ["puppies"]
    assert plural_forms("man", {"man": "men"}) == ["men"]


def test_word_lists_are_checked(refuses):
    refuses(load_lexicon, "words.toml", '[entity]\ndog = { parent = "beast" }\n', "unknown parent 'beast'")
    refuses(load_lexicon, "words.toml", "[entity\n", "cannot read detector word list")


def test_detect_rejects_items_outside_the_evidence():
    with pytest.raises(ValueError, match="outside the evidence"):
        detect(["A dog"], [1], [Evidence(("A dog",))])


# -- the sample project's answer key ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_detections():
    project = read_jsonl_project("sample", SAMPLE_DIR / "sample.jsonl").project
    key = answer_key()
    captions, items, truth = [], [], []
    for n, item in enumerate(project.items):
        for c in item.captions:
            captions.append(c.text)
            items.append(n)
            truth.append(set(key[c.system][n]))
    return detect(captions, items, [evidence_of_item(i) for i in project.items]), truth


def test_sample_answer_key_precision_and_recall(sample_detections):
    det, truth = sample_detections
    flags = det.flags()
    per_type = {}
    tp = fp = fn = 0
    for j, t in enumerate(ERROR_TYPE_IDS):
        y = np.array([t in ts for ts in truth])
        per_type[t] = detector_quality(y, det.scores[:, j])
        tp += int((flags[:, j] & y).sum())
        fp += int((flags[:, j] & ~y).sum())
        fn += int((~flags[:, j] & y).sum())
    # micro-averaged over all types: most errors of the key are found, most flags are right
    assert tp / (tp + fp) >= 0.6 and tp / (tp + fn) >= 0.6, (tp, fp, fn)
    # types whose single case in the key the detectors find
    found = {t for t, q in per_type.items() if q.recall == 1.0}
    assert found >= {"gender", "age", "clothing_type", "clothing_color", "color", "subject_similar",
                     "subject_nonexistent", "subject_extra", "subject_wrong", "object_wrong", "object_similar",
                     "object_nonexistent", "object_extra", "stance", "position", "number", "scene", "unrelated"}
    # the whole caption: inaccurate or not, against the key
    inaccurate = np.array([bool(ts) for ts in truth])
    q = detector_quality(inaccurate, det.score(INACCURATE))
    # 12 of the 13 inaccurate captions flagged; the one miss: "taking off" where the references say "launch"
    assert q.recall >= 12 / 13 and q.precision >= 12 / 13 and q.auc >= 0.7


def test_sample_triggers_name_the_wrong_words(sample_detections):
    det, truth = sample_detections
    # astronaut.jpg, sat-attn: "A man in an orange jacket ..."
    assert det.triggers(0, "gender") == {"gender": ["man"]}
    assert det.triggers(0, "clothing_type") == {"clothing_type": ["jacket"]}
    # camera.jpg, nic-beam: "... is sitting on a bench ..."
    assert det.triggers(9) == {"object_nonexistent": ["bench"], "stance": ["sitting"]}
    # hubble.jpg, sat-attn: "A black and white photo of a city at night" is beyond repair: unrelated, nothing else
    assert list(det.triggers(14)) == ["unrelated"] and set(det.triggers(14)["unrelated"]) >= {"city", "night"}
    assert det.scores[14, :len(ERROR_TYPE_IDS)].max() == det.score("unrelated")[14] == 1.0


def test_blocks_of_images_give_the_same_result(sample_detections):
    project = read_jsonl_project("sample", SAMPLE_DIR / "sample.jsonl").project
    captions = [c.text for item in project.items for c in item.captions]
    items = [n for n, item in enumerate(project.items) for _ in item.captions]
    evidence = [evidence_of_item(i) for i in project.items]
    whole, _ = sample_detections
    small = detect(captions, items, evidence, block_texts=7)  # about one image per block
    assert len(small._tokens) >= 8
    assert np.array_equal(small.scores, whole.scores) and np.array_equal(small.similarity, whole.similarity)
    assert [small.triggers(i) for i in range(len(captions))] == [whole.triggers(i) for i in range(len(captions))]
    assert small.chair() == whole.chair()


def _wordnet_lemmas() -> set[str]:
    """The English WordNet lemmas and function words that METEOR 1.5 (shipped by pycocoevalcap, a runtime
    dependency) carries."""
    import zipfile

    from annotator.java import meteor_jar
    with zipfile.ZipFile(meteor_jar()) as jar:
        lines = jar.read("synonym/english.synsets").decode("utf-8", "replace").splitlines()
        function = jar.read("function/english.words").decode("utf-8", "replace").split()
    # english.synsets: a lemma line, then a line of its synset ids
    return {line.replace("_", " ").lower() for line in lines[0::2]} | {w.lower() for w in function}


def test_every_concept_name_in_the_word_lists_is_a_known_word_or_phrase():
    """A concept name (entities, body parts, scenes, age groups: the named values) is a WordNet lemma, or each of
    its words is one (a regular plural counts by its singular): a name glued to a stray word ('keyskateboard', a
    broken line) defines a concept no caption ever names."""
    import re

    from annotator.estimate.lexicon import DETECTOR_WORDS_FILE
    from annotator.taxonomy import read_toml
    data = read_toml(DETECTOR_WORDS_FILE, "the detector word lists")
    lemmas = _wordnet_lemmas()

    def known(word: str) -> bool:
        return word in lemmas or any(word.endswith(s) and word[:-len(s)] in lemmas for s in ("s", "es"))

    names = [(table, name) for table in ("entity", "part", "scene", "age")
             for name, spec in data[table].items() if isinstance(spec, dict)]
    assert len(names) > 200
    unknown = [(table, name) for table, name in names
               if name.replace("_", " ") not in lemmas and not all(known(w) for w in re.findall(r"[a-z]+", name))]
    assert unknown == []
    assert "skateboard" in data["entity"] and "keyskateboard" not in data["entity"]
