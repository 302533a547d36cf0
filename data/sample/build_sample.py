"""Rebuild the bundled sample project from the readable source below.

Run from the repository root: ``.venv/bin/python data/sample/build_sample.py``.
It copies the photographs out of the installed scikit-image / scikit-learn
packages into ``images/`` (as JPEG) and writes ``sample.jsonl``,
``answer_key.json`` and the example judgement files under ``judgements/``.
The app never runs this; it only reads the files it wrote.

Phrase markup in references and captions: ``[words|box ids]`` marks a mention
of the comma-separated gold boxes; phrase types come from the boxes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

SYSTEMS = ("sat-attn", "nic-beam")

# key, package, path inside the package, boxes (id, label, synset, phrase type, x, y, w, h),
# five references, one caption per system, the caption's error types (answer key).
ITEMS = [
    {
        "key": "astronaut.jpg", "source": ("skimage", "data/astronaut.png"),
        "boxes": [
            ("1", "woman", "woman.n.01", "people", 20, 12, 345, 500),
            ("2", "space suit", "space_suit.n.01", "clothing", 20, 148, 345, 364),
            ("3", "helmet", "helmet.n.02", "clothing", 276, 342, 236, 170),
            ("4", "flag", "flag.n.01", "other", 0, 0, 96, 512),
            ("5", "shuttle model", "model.n.04", "other", 352, 0, 122, 284),
            ("6", "patch", "badge.n.01", "clothing", 133, 349, 78, 77),
        ],
        "references": [
            "[A smiling woman|1] in [an orange space suit|2] poses between [a flag|4] and [a model of the space shuttle|5]",
            "[An astronaut|1] with short hair sits for a portrait next to [her helmet|3]",
            "[A female astronaut|1] wearing [an orange pressure suit|2] with [a mission patch|6]",
            "[A woman|1] in [an orange suit|2] smiles in front of [the American flag|4]",
            "Official portrait of [an astronaut|1] with [a space helmet|3] and [a shuttle model|5]",
        ],
        "captions": {
            "sat-attn": ("[A man|1] in [an orange jacket|2] smiling in front of [an american flag|4]", ["gender", "clothing_type"]),
            "nic-beam": ("[A young girl|1] in [a blue space suit|2] is holding [an american flag|4]",
                         ["age", "clothing_color", "object_wrong"]),
        },
    },
    {
        "key": "chelsea.jpg", "source": ("skimage", "data/chelsea.png"),
        "boxes": [
            ("1", "cat", "cat.n.01", "animals", 0, 0, 400, 300),
            ("2", "eye", "eye.n.01", "bodyparts", 133, 83, 72, 62),
            ("3", "eye", "eye.n.01", "bodyparts", 295, 108, 50, 55),
            ("4", "nose", "nose.n.01", "bodyparts", 238, 222, 56, 44),
        ],
        "references": [
            "[A tabby cat|1] stares into the camera with [green eyes|2,3]",
            "Close-up of [a striped cat's face|1] with [a pink nose|4]",
            "[A brown and grey cat|1] looks slightly past the camera",
            "[The face of a cat|1] with long white whiskers",
            "[A short-haired cat|1] with [yellow-green eyes|2,3] looks to the side",
        ],
        "captions": {
            "sat-attn": ("A close up of [a tabby cat|1] with [green eyes|2,3]", []),
            "nic-beam": ("[Two small dogs|1] looking at the camera", ["subject_similar", "number"]),
        },
    },
    {
        "key": "coffee.jpg", "source": ("skimage", "data/coffee.png"),
        "boxes": [
            ("1", "cup", "cup.n.01", "other", 172, 18, 238, 290),
            ("2", "saucer", "saucer.n.02", "other", 75, 65, 405, 325),
            ("3", "spoon", "spoon.n.01", "other", 325, 65, 100, 262),
            ("4", "coffee", "espresso.n.01", "other", 205, 95, 165, 97),
            ("5", "table", "table.n.02", "scene", 0, 0, 600, 400),
        ],
        "references": [
            "[A small espresso cup|1] on [a red saucer|2] with [a metal spoon|3]",
            "[A cup of espresso|1,4] sits on [a saucer|2] on [a wooden table|5]",
            "[A red and white cup|1] full of [coffee|4] on [a matching saucer|2]",
            "[An espresso|1,4] served with [a spoon|3] on [a rustic wooden counter|5]",
            "Top view of [a coffee cup|1] and [a teaspoon|3] resting on [a red plate|2]",
        ],
        "captions": {
            "sat-attn": ("[A cup of coffee|1,4] and a cup of coffee on [a wooden table|5]", ["subject_extra"]),
            "nic-beam": ("[A green cup of coffee|1,4] on [a saucer|2] with [a spoon|3] and a spoon", ["color", "object_extra"]),
        },
    },
    {
        "key": "rocket.jpg", "source": ("skimage", "data/rocket.jpg"),
        "boxes": [
            ("1", "rocket", "rocket.n.01", "vehicles", 303, 126, 37, 284),
            ("2", "tower", "tower.n.01", "other", 0, 0, 90, 427),
            ("3", "tower", "tower.n.01", "other", 165, 122, 45, 305),
            ("4", "tower", "tower.n.01", "other", 436, 122, 44, 305),
            ("5", "tower", "tower.n.01", "other", 557, 0, 83, 427),
            ("6", "launch pad", "launching_pad.n.01", "scene", 265, 345, 120, 82),
        ],
        "references": [
            "[A white rocket|1] stands on [the launch pad|6] at dusk",
            "[A rocket|1] waits for launch between [four lattice towers|2,3,4,5]",
            "[A tall rocket|1] lit by floodlights under a dark blue evening sky",
            "[A space rocket|1] on [its launch pad|6] before lift-off at twilight",
            "[Metal towers|2,3,4,5] surround [a rocket|1] ready for launch",
        ],
        "captions": {
            "sat-attn": ("[A rocket|1] is taking off into the evening sky", ["activity"]),
            "nic-beam": ("[A white rocket|1] standing between [two cranes|3,4] in the middle of the ocean",
                         ["object_similar", "position"]),
        },
    },
    {
        "key": "camera.jpg", "source": ("skimage", "data/camera.png"),
        "boxes": [
            ("1", "man", "man.n.01", "people", 0, 62, 335, 450),
            ("2", "coat", "coat.n.01", "clothing", 0, 105, 300, 407),
            ("3", "camera", "camera.n.01", "other", 252, 137, 78, 55),
            ("4", "tripod", "tripod.n.01", "other", 228, 188, 182, 324),
            ("5", "buildings", "building.n.01", "scene", 330, 115, 182, 120),
            ("6", "field", "field.n.01", "scene", 0, 230, 512, 282),
        ],
        "references": [
            "[A man|1] in [a dark coat|2] films with [a camera|3] mounted on [a tripod|4]",
            "[A young man|1] looks through [a video camera|3] in [a park|6]",
            "Black and white photo of [a cameraman|1] standing in [a grassy field|6]",
            "[A man|1] wearing [a long black coat|2] and gloves operates [a camera|3]",
            "[A photographer|1] bends over [his tripod|4] with [buildings|5] in the distance",
        ],
        "captions": {
            "sat-attn": ("[A man|1] in [a black coat|2] is filming with [a camera|3] on a beach", ["scene"]),
            "nic-beam": ("[A man|1] in [a black coat|2] is sitting on a bench with [a camera|3]", ["stance", "object_nonexistent"]),
        },
    },
    {
        "key": "china.jpg", "source": ("sklearn", "datasets/images/china.jpg"),
        "boxes": [
            ("1", "pagoda", "pagoda.n.01", "other", 60, 28, 310, 362),
            ("2", "lake", "lake.n.01", "scene", 0, 205, 560, 130),
            ("3", "trees", "tree.n.01", "other", 330, 135, 310, 292),
            ("4", "tree", "tree.n.01", "other", 0, 140, 80, 287),
            ("5", "island", "island.n.01", "other", 420, 222, 82, 22),
            ("6", "sky", "sky.n.01", "scene", 0, 0, 640, 200),
        ],
        "references": [
            "[A tall Chinese pagoda|1] overlooks [a lake|2] on a hazy day",
            "[A red and gold tower|1] rises above [the trees|3] next to [a lake|2]",
            "[A traditional Chinese temple|1] on a hill with [a lake|2] and [a small island|5] behind it",
            "[A many-tiered pagoda|1] with green and orange roofs under [a pale sky|6]",
            "View of [a lake|2] from [a colourful pagoda|1] surrounded by [trees|3,4]",
        ],
        "captions": {
            "sat-attn": ("[A tall pagoda|1] stands on a hill above [a lake|2]", []),
            "nic-beam": ("A group of people are standing in front of [a temple|1] near [the water|2]", ["subject_nonexistent"]),
        },
    },
    {
        "key": "flower.jpg", "source": ("sklearn", "datasets/images/flower.jpg"),
        "boxes": [
            ("1", "dahlia", "dahlia.n.01", "other", 168, 85, 280, 275),
            ("2", "flower", "flower.n.01", "other", 287, 374, 180, 53),
            ("3", "leaves", "foliage.n.01", "scene", 0, 0, 640, 427),
        ],
        "references": [
            "[An orange dahlia|1] in full bloom against [dark green leaves|3]",
            "Close-up of [a round peach-coloured flower|1]",
            "[A pale orange dahlia|1] with [another bloom|2] just below it",
            "[A ball-shaped flower|1] with tightly curled petals",
            "[A single orange flower|1] in front of [a blurred green background|3]",
        ],
        "captions": {
            "sat-attn": ("A close up of [green leaves|3] on a bush", ["subject_wrong"]),
            "nic-beam": ("[An orange flower|1] made of paper in front of [green leaves|3]", ["other"]),
        },
    },
    {
        "key": "hubble.jpg", "source": ("skimage", "data/hubble_deep_field.jpg"),
        "boxes": [
            ("1", "spiral galaxy", "galaxy.n.03", "other", 100, 376, 46, 46),
            ("2", "galaxy", "galaxy.n.03", "other", 700, 446, 56, 56),
            ("3", "star", "star.n.03", "other", 733, 557, 44, 44),
            ("4", "galaxy", "galaxy.n.03", "other", 270, 88, 42, 42),
            ("5", "galaxy", "galaxy.n.03", "other", 488, 424, 54, 32),
            ("6", "space", "outer_space.n.01", "scene", 0, 0, 1000, 872),
        ],
        "references": [
            "[Thousands of galaxies|1,2,4,5] scattered across [the black of space|6]",
            "A deep space photograph full of [distant galaxies|1,2,4,5] and [a bright star|3]",
            "[Colourful galaxies|1,2,4,5] of many shapes on [a dark background|6]",
            "A telescope image showing [a spiral galaxy|1] among countless others",
            "[Red, white and blue points of light|1,2,3,4,5] in [deep space|6]",
        ],
        "captions": {
            "sat-attn": ("A black and white photo of a city at night", ["unrelated"]),
            "nic-beam": ("A view of [many stars and galaxies|1,2,3,4,5] in [the night sky|6]", []),
        },
    },
]

# Example judgements by two demo annotators, in the error-analysis tool's own
# spelling of the labels. "sample-ann" follows the answer key except for two
# captions; "sample-ben" disagrees more often, so agreement has something to show.
DEMO = {
    "sample-ann": {
        "sat-attn": {"astronaut.jpg": ["gender"], "camera.jpg": ["scene-event-location", "inexistent-object"]},
        "nic-beam": {},
    },
    "sample-ben": {
        "sat-attn": {"astronaut.jpg": ["gender", "color-of-clothing"], "rocket.jpg": ["activity", "position"],
                     "camera.jpg": [], "flower.jpg": ["similar-subject"]},
        "nic-beam": {"chelsea.jpg": ["similar-subject"], "coffee.jpg": ["color", "extra-subject"],
                     "rocket.jpg": ["similar-object"], "hubble.jpg": ["other"]},
    },
}

_SPELLING = {  # taxonomy id -> the error-analysis tool's label
    "age": "age", "gender": "gender", "clothing_type": "type-of-clothing", "clothing_color": "color-of-clothing",
    "subject_wrong": "wrong-subject", "subject_similar": "similar-subject", "subject_nonexistent": "inexistent-subject",
    "subject_extra": "extra-subject", "object_wrong": "wrong-object", "object_similar": "similar-object",
    "object_nonexistent": "inexistent-object", "object_extra": "extra-object", "stance": "stance",
    "activity": "activity", "position": "position", "number": "number", "scene": "scene-event-location",
    "color": "color", "other": "other", "unrelated": "generally-unrelated",
}

_MARK = re.compile(r"\[([^\[\]|]+)\|([^\[\]]*)\]")


def parse_marked(text: str, box_types: dict[str, str]) -> tuple[str, list[dict]]:
    """``[words|1,2]`` markup → plain text and mention objects (token spans)."""
    tokens: list[str] = []
    mentions = []
    pos = 0
    for m in _MARK.finditer(text):
        tokens.extend(text[pos:m.start()].split())
        words = m.group(1).split()
        ids = [b for b in m.group(2).split(",") if b]
        for b in ids:
            if b not in box_types:
                raise SystemExit(f"unknown box {b!r} in {text!r}")
        start = len(tokens)
        tokens.extend(words)
        types = sorted({box_types[b] for b in ids})
        mentions.append({"start": start, "end": len(tokens), "boxes": ids, "type": types[0] if len(types) == 1 else None})
        pos = m.end()
    tail = text[pos:]
    if "[" in tail or "]" in tail or "|" in tail:
        raise SystemExit(f"bad markup in {text!r}")
    tokens.extend(tail.split())
    return " ".join(tokens), mentions


def _package_file(package: str, rel: str) -> Path:
    import importlib
    mod = importlib.import_module(package)
    return Path(mod.__file__).resolve().parent / rel


def build() -> None:
    from PIL import Image

    from annotator.taxonomy import ERROR_TYPE_IDS
    images = HERE / "images"
    images.mkdir(exist_ok=True)
    lines = [json.dumps({"format": "annotator-jsonl", "version": 1, "image_root": "images"})]
    key: dict[str, dict[str, list[str]]] = {s: {} for s in SYSTEMS}
    for n, spec in enumerate(ITEMS):
        src = _package_file(*spec["source"])
        with Image.open(src) as im:
            rgb = im.convert("RGB")
            rgb.save(images / spec["key"], "JPEG", quality=90, optimize=True)
            width, height = rgb.size
        box_types = {b[0]: b[3] for b in spec["boxes"]}
        for b in spec["boxes"]:
            _, _, _, _, x, y, w, h = b
            assert 0 <= x and 0 <= y and x + w <= width and y + h <= height, (spec["key"], b, width, height)
        refs = []
        for r in spec["references"]:
            text, mentions = parse_marked(r, box_types)
            refs.append({"text": text, "mentions": mentions})
        caps = []
        for system in SYSTEMS:
            marked, types = spec["captions"][system]
            text, mentions = parse_marked(marked, box_types)
            caps.append({"system": system, "line": n, "text": text, "mentions": mentions})
            key[system][str(n)] = [t for t in ERROR_TYPE_IDS if t in types]  # taxonomy order
            assert len(key[system][str(n)]) == len(types), (spec["key"], types)
        record = {
            "key": spec["key"], "image": spec["key"], "width": width, "height": height, "is_practice": False,
            "boxes": [{"id": b[0], "label": b[1], "synset": b[2], "x": b[4], "y": b[5], "w": b[6], "h": b[7]}
                      for b in spec["boxes"]],
            "references": refs, "captions": caps,
        }
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    (HERE / "sample.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (HERE / "answer_key.json").write_text(
        "{\n" + ",\n".join(f" {json.dumps(system)}: {{\n" + ",\n".join(f"  {json.dumps(i)}: {json.dumps(t)}" for i, t in lines.items())
                           + "\n }" for system, lines in key.items()) + "\n}\n", encoding="utf-8")

    index = {spec["key"]: n for n, spec in enumerate(ITEMS)}
    for annotator, per_system in DEMO.items():
        out = HERE / "judgements" / annotator
        out.mkdir(parents=True, exist_ok=True)
        for system in SYSTEMS:
            fine: dict[str, list[str]] = {i: [_SPELLING[t] for t in types] for i, types in key[system].items()}
            for item_key, labels in per_system.get(system, {}).items():
                fine[str(index[item_key])] = list(labels)
            coarse = {i: ("incongruent" if labels else "congruent") for i, labels in fine.items()}
            (out / f"{system}.coarse.json").write_text(json.dumps(coarse, indent=1) + "\n", encoding="utf-8")
            (out / f"{system}.fine.json").write_text(
                json.dumps({i: v for i, v in fine.items() if v}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(ITEMS)} items to {HERE / 'sample.jsonl'}")


if __name__ == "__main__":
    build()
