"""Write requirements.lock: the exact version of every package the app and its tests install.

requirements.txt and requirements-dev.txt are the loose lists people edit; the lock pins the whole
dependency closure of requirements-dev.txt (which includes requirements.txt), and pip itself.
`make install` / `make install-dev` install requirements.txt / requirements-dev.txt with the lock as
constraints, so `make run` gets only the app's packages and `make test` the app's and the tests',
at the same versions.

    make lock                                  # resolve afresh: a new venv, the newest versions today
    python scripts/lock.py --python .venv/bin/python   # pin what an existing environment has

The fresh resolution installs into a temporary venv through pip as configured on this machine (its index
and wheel folders); run the test suite after re-locking.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements-dev.txt"
LOCK = ROOT / "requirements.lock"
HEADER = """\
# Exact versions of every package `make run` and `make test` install (constraints for pip).
# Generated from requirements-dev.txt (which includes requirements.txt) by `make lock`; do not edit by hand.
"""


def closure(requirement_files: list[Path]) -> dict[str, str]:
    """{distribution name: installed version} of the requirements in ``requirement_files`` and everything
    they depend on, as installed in the running interpreter (markers evaluated here, extras followed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo = [(Requirement(line), "") for line in _requirement_lines(requirement_files)]
    todo.append((Requirement("pip"), ""))
    pins: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req, parent_extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": parent_extra}):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            raise SystemExit(f"{req.name} is required but not installed in {sys.prefix}")
        if not req.specifier.contains(dist.version, prereleases=True):
            raise SystemExit(f"{req.name} {dist.version} is installed, but {req} is required")
        pins[dist.metadata["Name"]] = dist.version
        for sub in dist.requires or []:
            sub_req = Requirement(sub)
            if sub_req.marker is None or not _needs_extra(sub_req):
                todo.append((sub_req, ""))
            else:
                todo += [(sub_req, extra) for extra in req.extras]
    return pins


def _needs_extra(req) -> bool:
    return "extra" in str(req.marker)


def _requirement_lines(files: list[Path]) -> list[str]:
    lines = []
    for path in files:
        for raw in path.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("-r "):
                lines += _requirement_lines([path.parent / line[3:].strip()])
            else:
                lines.append(line)
    return lines


def write_lock(python: str, lock: Path = LOCK) -> None:
    """Pin the closure of requirements-dev.txt as installed for ``python`` into ``lock``."""
    out = subprocess.run([python, __file__, "--print-closure"], check=True, capture_output=True, text=True).stdout
    lock.write_text(HEADER + out)
    print(f"wrote {lock} ({len(out.splitlines())} packages)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="pin what this interpreter's environment has (default: a fresh venv)")
    parser.add_argument("--output", type=Path, default=LOCK, help="where to write the lock (default: %(default)s)")
    parser.add_argument("--print-closure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.print_closure:
        pins = closure([REQUIREMENTS])
        print("".join(f"{name}=={version}\n" for name, version in sorted(pins.items(), key=lambda p: p[0].lower())),
              end="")
        return 0
    if args.python:
        write_lock(args.python, args.output)
        return 0
    with tempfile.TemporaryDirectory(prefix="annotator-lock-") as tmp:
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / "bin" / "python")
        subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True)
        write_lock(python, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
