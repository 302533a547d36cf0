"""Rebuild the bundled sample project from its readable source, ``source.toml`` beside this script.

Run from the repository root: ``.venv/bin/python data/sample/build_sample.py``.
It copies the photographs out of the installed scikit-image / scikit-learn
packages into ``images/`` (as JPEG) and writes ``sample.jsonl``,
``answer_key.json``, the example judgement files under ``judgements/`` and the example judge ``judge.jsonl``.
The app never runs this; it only reads the files it wrote.

Phrase markup in references and captions: ``[words|box ids]`` marks a mention
of the comma-separated gold boxes; phrase types come from the boxes.
Boxes are ``[id, label, synset, phrase type, x, y, w, h]``.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

SOURCE = HERE / "source.toml"


def read_source(path: Path = SOURCE) -> dict:
    """The sample's readable source (source.toml): systems, items, the demo judgements and the original tool's
    spelling of each type id."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)


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
    source = read_source()
    systems, items = source["systems"], source["item"]
    images = HERE / "images"
    images.mkdir(exist_ok=True)
    lines = [json.dumps({"format": "annotator-jsonl", "version": 1, "image_root": "images"})]
    key: dict[str, dict[str, list[str]]] = {s: {} for s in systems}
    for n, spec in enumerate(items):
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
        for system in systems:
            marked, types = spec["captions"][system]["text"], spec["captions"][system]["types"]
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

    index = {spec["key"]: n for n, spec in enumerate(items)}
    for annotator, per_system in source["demo"].items():
        out = HERE / "judgements" / annotator
        out.mkdir(parents=True, exist_ok=True)
        for system in systems:
            fine: dict[str, list[str]] = {i: [source["spelling"][t] for t in types] for i, types in key[system].items()}
            for item_key, labels in per_system.get(system, {}).items():
                fine[str(index[item_key])] = list(labels)
            coarse = {i: ("incongruent" if labels else "congruent") for i, labels in fine.items()}
            (out / f"{system}.coarse.json").write_text(json.dumps(coarse, indent=1) + "\n", encoding="utf-8")
            (out / f"{system}.fine.json").write_text(
                json.dumps({i: v for i, v in fine.items() if v}, indent=1) + "\n", encoding="utf-8")
    build_judge(source)
    print(f"wrote {len(items)} items to {HERE / 'sample.jsonl'}")


def build_judge(source: dict | None = None) -> None:
    """The example judge of source.toml as judge.jsonl (annotator/exchange/judge_files.py's format)."""
    source = source or read_source()
    header = {"format": "annotator-judge", "version": 1, **source["judge"]}
    lines = [json.dumps(header, ensure_ascii=False)]
    for system, per_item in source["judge_outputs"].items():
        for item_key, out in per_item.items():
            row = {"item": item_key, "system": system, "p_inaccurate": out["p"]}
            if "types" in out:
                row["types"] = out["types"]
            if "spans" in out:
                row["spans"] = [{"start": a, "end": b, "type": t, **({"fix": fix} if fix else {})}
                                for a, b, t, fix in out["spans"]]
            lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    (HERE / "judge.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build()
