"""The importer catalog, format by format: its example imports, hostile copies of it are refused, the Data page's form.

Every test here is parametrised over :func:`annotator.exchange.catalog.formats`, so a
format added to the catalog is run through all of them without a new test.
"""

from __future__ import annotations

import inspect
import json
import pkgutil
from pathlib import Path

import pytest

import annotator.exchange
import annotator.io
from annotator.cli import build_parser, main
from annotator.exchange.catalog import MODULES, formats, get_format
from annotator.io.options import EXAMPLES_DIR
from annotator.sample import SAMPLE_PROJECT, load_sample
from annotator.store.projects import table_counts
from tests.apptest_helpers import page_test, visible

FORMATS = formats()
IDS = [f.name for f in FORMATS]

def _argv(fmt, paths: dict) -> list[str]:
    """Command-line arguments importing ``fmt`` with the example's values and the files in ``paths``."""
    values = {**fmt.example.values, **paths}
    argv: list[str] = []
    for o in fmt.options:
        if o.name not in values or values[o.name] is None:
            continue
        value = values[o.name]
        if o.flag is None:
            argv.append(str(value))
        elif o.kind == "switch":
            if value:
                argv += [o.flag, o.cli_values[1]] if o.cli_values else [o.flag]
        elif o.kind == "files":
            argv += [o.flag, *map(str, value)]
        elif o.kind == "list":
            argv += [o.flag, ",".join(value)]
        else:
            argv += [o.flag, str(value)]
    return argv


def _project(store, fmt) -> str:
    if fmt.example.into_sample:
        load_sample(store, with_judgements=False)
        return SAMPLE_PROJECT
    return "example"


def _run(store, capsys, fmt, project, argv):
    code = main(["--db", store.url, "import", fmt.name, "--project", project, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_catalog_lists_every_format_module_once():
    declared = {f"{package.__name__.split('.')[-1]}.{m.name}" for package in (annotator.io, annotator.exchange)
                for m in pkgutil.iter_modules(package.__path__)
                if "FORMAT = ImportFormat(" in (Path(package.__path__[0]) / f"{m.name}.py").read_text(encoding="utf-8")}
    assert declared == set(MODULES)
    assert len(set(IDS)) == len(IDS) == len(MODULES)
    assert get_format("coco") is FORMATS[1]
    with pytest.raises(KeyError):
        get_format("nope")
    # The command line lists exactly the catalog's formats, in its order.
    assert list(_import_commands()) == IDS


def _import_commands() -> dict:
    imp = build_parser()._subparsers._group_actions[0].choices["import"]
    return imp._subparsers._group_actions[0].choices


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_format_declaration(fmt):
    run = inspect.signature(fmt.run).parameters
    assert run["command_line"].kind is inspect.Parameter.KEYWORD_ONLY
    for o in fmt.options:
        assert o.name in run, f"{fmt.name}: option {o.name} is not a keyword of its run function"
        assert o.flag is None or o.flag.startswith("--")
    assert fmt.help and fmt.title and callable(fmt.read)
    for name, path in fmt.example.paths(fmt.name).items():
        for p in path if isinstance(path, list) else [path]:
            assert p.exists() and p.resolve().is_relative_to(EXAMPLES_DIR / fmt.name), p
    # Every declared flag reaches the command line.
    sub = _import_commands()[fmt.name]
    flags = {s for a in sub._actions for s in a.option_strings}
    assert {o.flag for o in fmt.options if o.flag} <= flags and "--project" in flags


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_example_imports_from_the_command_line(store, capsys, fmt):
    project = _project(store, fmt)
    before = table_counts(store)
    code, out, err = _run(store, capsys, fmt, project, [*_argv(fmt, fmt.example.paths(fmt.name)), "--json"])
    assert code == 0, err
    summary = json.loads(out)
    assert summary["project"] == project
    assert fmt.example.expect, "an example declares what its import reports"
    assert {k: summary[k] for k in fmt.example.expect} == fmt.example.expect
    assert table_counts(store) != before


def _hostile_cases():
    for fmt in FORMATS:
        for o in fmt.options:
            if o.name not in fmt.example.files:
                continue
            if o.kind == "folder":
                yield pytest.param(fmt, o.name, "missing", id=f"{fmt.name}-{o.name}-missing")
                continue
            for kind in ("missing", "not-utf8", "control-character", "empty"):
                yield pytest.param(fmt, o.name, kind, id=f"{fmt.name}-{o.name}-{kind}")


def _spoil(path: Path, kind: str, folder: Path) -> Path:
    """A copy of ``path`` under ``folder`` made hostile in one way."""
    target = folder / ("spoilt-" + path.name)
    if kind == "missing":
        return target
    data = path.read_bytes()
    first_line = data.index(b"\n")
    if kind == "not-utf8":
        data = data[:first_line] + b"\xff\xfe" + data[first_line:]
    elif kind == "control-character":
        data = data[:first_line] + b"\x1b[2J" + data[first_line:]
    elif kind == "empty":
        data = b""
    target.write_bytes(data)
    return target


@pytest.mark.parametrize("fmt, option, kind", list(_hostile_cases()))
def test_hostile_example_is_refused_and_stores_nothing(sqlite_store, capsys, tmp_path, fmt, option, kind):
    store = sqlite_store
    load_sample(store, with_judgements=False)
    project = SAMPLE_PROJECT if fmt.example.into_sample else "example"
    if not fmt.example.into_sample:  # the example's own project exists already: a refusal must leave it as it was
        assert _run(store, capsys, fmt, project, _argv(fmt, fmt.example.paths(fmt.name)))[0] == 0
    paths = fmt.example.paths(fmt.name)
    original = paths[option][0] if isinstance(paths[option], list) else paths[option]
    if fmt.get_option(option).kind == "folder":
        spoilt = tmp_path / "no-such-folder"
    else:
        spoilt = _spoil(original, kind, tmp_path)
    paths[option] = [spoilt, *paths[option][1:]] if isinstance(paths[option], list) else spoilt
    before = table_counts(store)
    code, out, err = _run(store, capsys, fmt, project, _argv(fmt, paths))
    assert code == 2, (out, err)
    assert err.startswith("annotator: error: ") and spoilt.name in err, err
    assert out == ""
    assert table_counts(store) == before


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_data_page_form_is_the_declaration(sqlite_store, fmt):
    at = page_test("data", sqlite_store.url, user="ada", role="admin").run()
    at.selectbox(key="data_format").set_value(fmt.name).run()
    assert not at.exception
    keys = {w.key for kind in ("text_input", "checkbox", "selectbox", "number_input") for w in at.get(kind)}
    for o in fmt.options:
        if o.kind not in ("file", "files"):  # (AppTest does not list file uploaders)
            assert o.widget_key(fmt.name) in keys, o.name
    at.button[0].click().run()  # nothing filled in
    required = [n.replace("_", " ") for n in fmt.required() if get_kind(fmt, n) != "choice"]
    assert visible(at.error[0].value) == "please fill in: " + ", ".join(required)


def get_kind(fmt, name: str) -> str:
    return "text" if name == "project" else fmt.get_option(name).kind


def test_example_files_are_installed_with_the_package():
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"annotator.io" = ["examples/*/*", "examples/*/*/*"]' in pyproject
    deepest = max(len(p.relative_to(EXAMPLES_DIR).parts) for p in EXAMPLES_DIR.rglob("*") if p.is_file())
    assert deepest <= 3
