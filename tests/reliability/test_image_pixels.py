"""Image pixel cap: a 12000 x 12000 PNG of a few hundred KB is refused at import, and when such a file is put
in place after the import, showing it takes little memory (measured in a fresh process)."""

from __future__ import annotations

import functools
import io
import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

from annotator.cli import main
from annotator.images import MAX_IMAGE_PIXELS
from annotator.store.projects import load_project, project_names
from tests.memory_helpers import PEAK_KIB

ROOT = Path(__file__).resolve().parents[2]
HUGE = (12000, 12000)

# Peak memory of the render, read in a fresh process (peak_kib: VmHWM, which starts afresh at exec, where
# ru_maxrss would carry the peak of the whole test run that forked it).
RENDER = PEAK_KIB + r"""
import io, json, sys, time
sys.path.insert(0, sys.argv[1])
from annotator.annotation import _item_jpeg
from annotator.images import render_item_png
from annotator.store import open_store
from annotator.store.projects import load_project
project = load_project(open_store(sys.argv[2]), "p")
item = project.items[0]
t = time.perf_counter()
png = render_item_png(project.image_root, item)
jpeg, note = _item_jpeg(project.image_root, item.image, tuple(item.boxes), item.width, item.height, True)
seconds = time.perf_counter() - t
print(json.dumps({"peak_mib": peak_kib() / 1024, "seconds": seconds, "png": png.hex(), "jpeg_bytes": len(jpeg), "note": note}))
"""


@functools.cache
def _huge_png_bytes() -> bytes:
    # Encoding 144 million pixels takes seconds: once per process, not once per test.
    buffer = io.BytesIO()
    Image.new("RGB", HUGE, (120, 150, 180)).save(buffer, format="PNG")
    return buffer.getvalue()


def _huge_png(path: Path) -> None:
    path.write_bytes(_huge_png_bytes())


def _files(tmp_path: Path) -> tuple[Path, list[str]]:
    images = tmp_path / "images"
    images.mkdir()
    (tmp_path / "caps.txt").write_text("a dog on a sofa\n", encoding="utf-8")
    (tmp_path / "refs.txt").write_text("a dog lies on a sofa\n", encoding="utf-8")
    (tmp_path / "list.txt").write_text("big.png\n", encoding="utf-8")
    args = ["import", "lines", "--project", "p", "--system", "s", "--captions", str(tmp_path / "caps.txt"),
            "--references", str(tmp_path / "refs.txt"), "--images", str(tmp_path / "list.txt"),
            "--image-root", str(images)]
    return images, args


def test_huge_image_is_refused_at_import_with_file_line_pixels_and_cap(sqlite_store, tmp_path, capsys):
    images, args = _files(tmp_path)
    _huge_png(images / "big.png")
    assert (images / "big.png").stat().st_size < 1_000_000  # small on disk, 432 MB decoded
    rc = main(["--db", sqlite_store.url, *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert "list.txt, line 1" in err and "big.png" in err
    assert "144,000,000 pixels" in err and f"{MAX_IMAGE_PIXELS:,}" in err
    assert project_names(sqlite_store) == []


def test_huge_image_put_in_place_after_import_renders_in_little_memory(sqlite_store, tmp_path, capsys):
    images, args = _files(tmp_path)
    Image.new("RGB", (400, 300), (10, 20, 30)).save(images / "big.png")
    assert main(["--db", sqlite_store.url, *args]) == 0, capsys.readouterr().err
    assert (load_project(sqlite_store, "p").items[0].width, load_project(sqlite_store, "p").items[0].height) == (400, 300)
    _huge_png(images / "big.png")  # replaced on disk after the import
    out = subprocess.run([sys.executable, "-c", RENDER, str(ROOT), sqlite_store.url], capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin", "ANNOTATOR_IMAGE_ROOTS": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["peak_mib"] < 300, result["peak_mib"]
    # Not decoded: the boxes' canvas at the recorded size, with a note saying why.
    with Image.open(io.BytesIO(bytes.fromhex(result["png"]))) as im:
        assert im.size == (400, 300)
        colours = {c for _, c in im.convert("RGB").getcolors(1_000_000)}
    assert (120, 0, 0) in colours  # the note's dark red text
    assert (120, 150, 180) not in colours  # nothing of the huge photo itself
    assert result["jpeg_bytes"] > 0


def test_huge_image_is_refused_by_the_jsonl_import_too(sqlite_store, tmp_path, capsys):
    # The JSONL importer applies the same cap with the same message as the lines importer, also when the item
    # records a small width and height of its own.
    images = tmp_path / "images"
    images.mkdir()
    _huge_png(images / "big.png")
    Image.new("RGB", (40, 30)).save(images / "small.png")
    path = tmp_path / "items.jsonl"
    rows = [{"format": "annotator-jsonl", "version": 1, "image_root": "images"},
            {"key": "small.png", "image": "small.png", "captions": [{"system": "s", "text": "a dog"}]},
            {"key": "big.png", "image": "big.png", "width": 40, "height": 30, "captions": [{"system": "s", "text": "a cat"}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rc = main(["--db", sqlite_store.url, "import", "jsonl", "--project", "p", str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "items.jsonl, line 3" in err and "big.png" in err
    assert "144,000,000 pixels" in err and f"{MAX_IMAGE_PIXELS:,}" in err and "too large to show" in err
    assert project_names(sqlite_store) == []
