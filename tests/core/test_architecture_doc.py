"""docs/architecture.md's map of the house stays true: every path it names exists, and every module and package of
annotator/, every top-level folder of the checkout and every folder of tests/ is on it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"

#: Top-level folders that are not part of the house the map describes: CI's entry point and Streamlit's settings.
OFF_THE_MAP = {".ci", ".streamlit"}


def mapped_paths(text: str) -> list[str]:
    """The paths the map names: the first block under "## The rooms", where an entry starts at column 0 (a path
    from the checkout) or column 2 (a path inside the last column-0 folder) and its description follows."""
    block = re.search(r"^## The rooms\n\n```\n(.*?)^```", text, flags=re.M | re.S)
    assert block, "docs/architecture.md needs a '## The rooms' section with the map in a fenced block"
    paths, folder = [], ""
    for line in block.group(1).splitlines():
        entry = re.match(r"^( {0,2})(\S+)(?:\s|$)", line)
        if entry is None:
            continue  # a description carried on to the next line
        indent, name = entry.groups()
        if indent:
            assert folder, f"an entry inside no folder: {line!r}"
            paths.append(folder + name)
        else:
            paths.append(name)
            folder = name if name.endswith("/") else ""
    return paths


def map_entries(text: str) -> dict[str, str]:
    """Each path of the map (:func:`mapped_paths`) with what its entry says: the rest of its line and the lines
    carried on below it (a path named twice gets both texts)."""
    block = re.search(r"^## The rooms\n\n```\n(.*?)^```", text, flags=re.M | re.S)
    entries, paths, current = {}, iter(mapped_paths(text)), None
    for line in block.group(1).splitlines():
        entry = re.match(r"^( {0,2})(\S+)(?:\s|$)", line)
        if entry is not None:
            current = next(paths)
            entries[current] = entries.get(current, "") + " " + line[entry.end():].strip()
        elif current is not None:
            entries[current] += " " + line.strip()
    return entries


def test_the_map_is_read_as_it_should_be():
    sample = ("## The rooms\n\n```\napp.py       router\npages/       one page\n                 per screen\n"
              "annotator/   the core\n  model.py   classes\n  store/     SQL, from\n                 here\ntests/\n"
              "  core/      pure\n```\n")
    assert mapped_paths(sample) == ["app.py", "pages/", "annotator/", "annotator/model.py", "annotator/store/",
                                    "tests/", "tests/core/"]
    assert map_entries(sample)["annotator/store/"] == " SQL, from here"


def test_every_path_on_the_map_exists():
    paths = mapped_paths(DOC.read_text(encoding="utf-8"))
    assert len(paths) > 40
    missing = [p for p in paths if not (ROOT / p).exists() or (ROOT / p).is_dir() != p.endswith("/")]
    assert missing == [], f"docs/architecture.md names what is not there (or a folder without its /): {missing}"


def test_every_room_of_the_house_is_on_the_map():
    paths = set(mapped_paths(DOC.read_text(encoding="utf-8")))
    package = ROOT / "annotator"
    modules = {f"annotator/{p.name}" for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    packages = {f"annotator/{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    tests = {f"tests/{p.name}/" for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"}
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {line.split("/")[0] for line in tracked.splitlines() if "/" in line} - OFF_THE_MAP
    unmapped = sorted((modules | packages | tests) - paths)
    unmapped += sorted(t + "/" for t in top if not any(p.startswith(t + "/") for p in paths))
    assert unmapped == [], f"not on the map of docs/architecture.md (add a line saying what it holds): {unmapped}"


def test_every_ui_package_and_its_modules_are_on_the_map():
    """annotator/ui/ is a package per screen and three shared ones: each is an entry of its own (``  ui/<name>/``)
    whose text names each of its modules and scripts."""
    entries = map_entries(DOC.read_text(encoding="utf-8"))
    ui = ROOT / "annotator" / "ui"
    unnamed = []
    for package in sorted(p for p in ui.iterdir() if (p / "__init__.py").is_file()):
        path = f"annotator/ui/{package.name}/"
        if path not in entries:
            unnamed.append(path)
            continue
        files = [f.name for f in package.iterdir() if f.suffix in (".py", ".js", ".css") and f.name != "__init__.py"]
        unnamed += [path + f for f in sorted(files) if not re.search(rf"(?<![\w/]){re.escape(f)}", entries[path])]
    assert unnamed == [], f"not on the map of docs/architecture.md (say what each holds): {unnamed}"
