"""Seeded synthetic captions and references for tests and benchmarks.

The generator builds image-description-like sentences from a small vocabulary
of people, animals, clothing, colours, activities and places, so n-gram
overlap between a caption and its references behaves roughly as on a real
captioning data set (a shared scene, different wording). Nothing here is used
for scoring real projects.
"""

from __future__ import annotations

import random

_PEOPLE = ["man", "woman", "boy", "girl", "child", "person", "guy", "lady", "skier", "surfer",
           "player", "worker", "biker", "dancer", "crowd", "group of people", "young man", "old woman"]
_ANIMALS = ["dog", "cat", "horse", "bird", "cow", "sheep", "elephant", "giraffe", "bear", "zebra"]
_COLOURS = ["red", "blue", "black", "white", "green", "yellow", "pink", "orange", "brown", "gray", "purple"]
_CLOTHES = ["shirt", "jacket", "hat", "dress", "helmet", "coat", "t-shirt", "skirt", "uniform", "sweater"]
_ACTIVITIES = ["riding a bike", "walking down the street", "playing soccer", "sitting on a bench",
               "standing in front of a building", "jumping in the air", "running on the beach",
               "holding an umbrella", "eating a sandwich", "climbing a rock", "throwing a frisbee",
               "playing the guitar", "looking at the camera", "crossing the road", "surfing a wave",
               "skiing down a hill", "talking on a phone", "reading a book", "cooking in a kitchen"]
_ANIMAL_ACTS = ["running through the grass", "lying on the floor", "standing in a field", "drinking water",
                "sleeping on a couch", "catching a ball", "walking in the snow", "eating hay"]
_PLACES = ["in a park", "on the street", "near the water", "in the city", "at the beach", "in a field",
           "on a sidewalk", "in the snow", "in a room", "at night", "outside", "next to a car"]
_DETS = ["a", "the", "one"]
_PUNCT = [".", " .", "!", ",", ""]


def _person_phrase(rng: random.Random) -> str:
    words = [rng.choice(_DETS)]
    if rng.random() < 0.3:
        words.append(rng.choice(["young", "old", "little", "smiling", "tall"]))
    words.append(rng.choice(_PEOPLE))
    if rng.random() < 0.5:
        words += ["in", "a", rng.choice(_COLOURS), rng.choice(_CLOTHES)]
    return " ".join(words)


def _scene(rng: random.Random) -> dict:
    if rng.random() < 0.75:
        return {"kind": "person", "act": rng.choice(_ACTIVITIES), "place": rng.choice(_PLACES)}
    return {"kind": "animal", "animal": rng.choice(_ANIMALS), "act": rng.choice(_ANIMAL_ACTS), "place": rng.choice(_PLACES)}


def _describe(rng: random.Random, scene: dict, fidelity: float) -> str:
    """One sentence about ``scene``; lower ``fidelity`` drifts to other words."""
    if scene["kind"] == "person":
        subject = _person_phrase(rng)
        act = scene["act"] if rng.random() < fidelity else rng.choice(_ACTIVITIES)
    else:
        animal = scene["animal"] if rng.random() < fidelity else rng.choice(_ANIMALS)
        subject = f"{rng.choice(_DETS)} {rng.choice(_COLOURS) + ' ' if rng.random() < 0.4 else ''}{animal}"
        act = scene["act"] if rng.random() < fidelity else rng.choice(_ANIMAL_ACTS)
    verb = rng.choice(["is ", "", "is ", ""])
    text = f"{subject} {verb}{act}"
    if rng.random() < 0.7:
        text += " " + (scene["place"] if rng.random() < fidelity else rng.choice(_PLACES))
    if rng.random() < 0.3:
        text = text[0].upper() + text[1:]
    return text + rng.choice(_PUNCT)


def synthetic_corpus(n: int = 1000, refs_per_item: int = 5, seed: int = 0, *,
                     odd_rate: float = 0.0) -> tuple[list[str], list[list[str]]]:
    """Return ``(hyps, refs)``: ``n`` system captions and ``refs_per_item`` references each.

    ``odd_rate`` is the share of captions replaced by an edge case (empty, one
    word, repeated words, extra spaces, punctuation only) so tests exercise what
    the metrics do with them.
    """
    rng = random.Random(seed)
    hyps: list[str] = []
    refs: list[list[str]] = []
    odd = ["", "dog", "a", "a a a a a", "the  man   rides", " a man ", "!", "man man man dog dog",
           "A man 's hat (red) -- \"quoted\" ... ok?", "can't won't it's"]
    for _ in range(n):
        scene = _scene(rng)
        item_refs = [_describe(rng, scene, 0.85) for _ in range(refs_per_item)]
        if odd_rate and rng.random() < odd_rate:
            hyp = rng.choice(odd)
        else:
            hyp = _describe(rng, scene, 0.6)
        hyps.append(hyp)
        refs.append(item_refs)
    return hyps, refs


def perturb(hyps: list[str], rate: float, seed: int = 1) -> list[str]:
    """A copy of ``hyps`` where a share ``rate`` of captions has one word swapped.

    Used to make a second "system" (or a corrected variant) that differs from
    the first on some captions only.
    """
    rng = random.Random(seed)
    pool = _COLOURS + _PEOPLE + _ANIMALS + _CLOTHES
    out = list(hyps)
    for i, h in enumerate(hyps):
        words = h.split(" ")
        if words and rng.random() < rate:
            words[rng.randrange(len(words))] = rng.choice(pool)
            out[i] = " ".join(words)
    return out
