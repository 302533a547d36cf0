"""Benchmark: peak memory and time to render one image with its gold boxes.

Each case writes one image file, then renders it in a fresh Python process
(as the annotate page does: the item's photo with two boxes, longest side
1024) and reports that process's peak resident memory (``ru_maxrss``) before
and after the render, and the render time. The first case is a 12000 x 12000
PNG of a few hundred KB (a decompression bomb in everything but name); the
others are ordinary and large photos.

Usage: .venv/bin/python bench/image_render_bench.py [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = {
    # name: (width, height, format)
    "png-12000x12000": (12000, 12000, "PNG"),
    "jpeg-12000x12000": (12000, 12000, "JPEG"),
    "png-7000x7000": (7000, 7000, "PNG"),
    "png-6000x6000": (6000, 6000, "PNG"),
    "jpeg-4000x3000": (4000, 3000, "JPEG"),
    "jpeg-640x480": (640, 480, "JPEG"),
}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from annotator.images import render_boxes_png
from annotator.model import Box
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
boxes = [Box("1", "dog", 10, 10, 300, 200), Box("2", "ball", 400, 300, 80, 80)]
t = time.perf_counter()
png = render_boxes_png(sys.argv[2], sys.argv[3], boxes)
seconds = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before_mib": before / 1024, "peak_mib": after / 1024, "seconds": seconds, "png_bytes": len(png)}))
"""


def write_image(path: Path, width: int, height: int, fmt: str) -> None:
    """A mostly flat picture with a few shapes (compresses like a scan or a screenshot)."""
    from PIL import Image, ImageDraw
    im = Image.new("RGB", (width, height), (120, 150, 180))
    draw = ImageDraw.Draw(im)
    for k in range(8):
        x, y = width * k // 9, height * (8 - k) // 9
        draw.ellipse([x, y, x + width // 10, y + height // 10], fill=(30 * k, 200 - 20 * k, 90))
    im.save(path, format=fmt, **({"quality": 85} if fmt == "JPEG" else {}))


def run_case(root: Path, name: str) -> dict:
    """Write the case's image under ``root`` and render it in a fresh process.

    Both happen in child processes: Linux hands a parent's peak RSS down to
    the children it forks, so this process stays small.
    """
    width, height, fmt = CASES[name]
    file = f"{name}.{fmt.lower()}"
    subprocess.run([sys.executable, __file__, "--write", str(root / file), str(width), str(height), fmt], check=True)
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(root), file], capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin", "ANNOTATOR_IMAGE_ROOTS": str(root)})
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(case=name, file_kib=(root / file).stat().st_size / 1024)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=list(CASES), help="run one case")
    parser.add_argument("--write", nargs=4, metavar=("FILE", "W", "H", "FORMAT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        file, width, height, fmt = args.write
        write_image(Path(file), int(width), int(height), fmt)
        return 0
    names = [args.only] if args.only else list(CASES)
    print(f"{'case':18s} {'file KiB':>9s} {'RSS before MiB':>15s} {'peak RSS MiB':>13s} {'render s':>9s}")
    with tempfile.TemporaryDirectory(prefix="annotator-image-bench-") as tmp:
        for name in names:
            r = run_case(Path(tmp), name)
            print(f"{r['case']:18s} {r['file_kib']:9.0f} {r['before_mib']:15.0f} {r['peak_mib']:13.0f} {r['seconds']:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
