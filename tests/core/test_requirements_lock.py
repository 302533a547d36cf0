"""requirements.lock pins what the suite runs with, and the make targets install through it."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"


def _lock_script():
    spec = importlib.util.spec_from_file_location("annotator_lock_script", ROOT / "scripts" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_every_requirement_is_pinned_within_its_range():
    pins = _pins()
    lock = _lock_script()
    for line in lock._requirement_lines([ROOT / "requirements-dev.txt"]):
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), f"{pins[name]} does not meet {req}: run `make lock`"


def test_the_lock_is_exactly_what_this_environment_runs():
    """The installed closure of requirements-dev.txt equals the lock: nothing missing, nothing at another version."""
    installed = {canonicalize_name(n): v for n, v in _lock_script().closure([ROOT / "requirements-dev.txt"]).items()}
    assert installed == _pins()


def test_make_installs_through_the_lock_and_reinstalls_when_it_changes():
    plan = subprocess.run(["make", "-n", "-W", "requirements.lock", "install-dev"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout
    lines = [ln for ln in plan.splitlines() if "pip install" in ln and "-e ." not in ln]
    # Label Studio's SDK, the Label Studio tests' reference, has a virtualenv of its own with a lock of its own
    ls_lines = [ln for ln in lines if ln.startswith(".venv-labelstudio/")]
    assert all("-c requirements-labelstudio.lock" in ln for ln in ls_lines), plan  # (none when it is built already)
    pip_lines = [ln for ln in lines if ln not in ls_lines]
    assert len(pip_lines) == 3, plan  # pip itself, the app's requirements, the tests' requirements
    assert all("-c requirements.lock" in ln for ln in pip_lines), plan
    assert any("-r requirements.txt" in ln for ln in pip_lines) and any("-r requirements-dev.txt" in ln for ln in pip_lines)


def test_label_studios_lock_pins_the_server_and_the_sdk_it_asks_for():
    lock = {}
    for line in (ROOT / "requirements-labelstudio.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            lock[canonicalize_name(name)] = version
    wanted = [Requirement(ln) for ln in (ROOT / "requirements-labelstudio.txt").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")]
    assert {canonicalize_name(r.name) for r in wanted} >= {"label-studio", "label-studio-sdk"}
    for req in wanted:
        assert req.specifier.contains(lock[canonicalize_name(req.name)]), f"{req} is not what the lock pins"
