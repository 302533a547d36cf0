"""What the CLI prints is safe to show on a terminal, and its --json output is strict JSON.

Names, captions and typed arguments can hold terminal escapes, carriage returns, bidirectional overrides and
zero-width characters (stored by an older version, another tool, or typed). Text output shows them as visible
escapes; --json output writes them as \\u escapes, so it still parses to exactly the stored strings. Missing
numbers are null, never NaN, in every --json output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import pytest

from annotator.cli import json_text, main, printable
from annotator.sample import load_sample
from annotator.store import open_store, schema
from annotator.store.judgements import save_judgement
from annotator.store.users import user_name_key
from tests.apptest_helpers import seed_project
from tests.zygote import run_annotator

ROOT = Path(__file__).resolve().parents[2]

# A colour change, a terminal-title change ending in BEL, a screen clear, a carriage return that overwrites the
# line, a right-to-left override, a zero-width space, an 8-bit CSI, DEL and a line separator.
HOSTILE_PROJECT = "proj\x1b[31mRED\x1b]0;owned\x07\u202eevil\u200b"
HOSTILE_USER = "ann\x1b[2J\rroot\u009b1m\x7f\u2028x"
HOSTILE_CAPTION = "a dog\x1b[8m hidden \u2066and\u2069 \u202eparked"


def _unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal could act on (newline and tab allowed)."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


def _strict_loads(text: str):
    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def _cli(url: str, *args: str, piped: bool = False) -> subprocess.CompletedProcess:
    """``python -m annotator --db url *args`` as a process of its own (forked: tests/zygote.py); ``piped``: a fresh
    interpreter whose standard streams are pipes."""
    if piped:
        return subprocess.run([sys.executable, "-m", "annotator", "--db", url, *args], cwd=ROOT, capture_output=True,
                              text=True, encoding="utf-8", timeout=120)
    return run_annotator(["--db", url, *args], cwd=ROOT)


@pytest.fixture
def hostile_store(sqlite_store):
    """A store holding a project, a user and a caption with hostile characters, written below any importer's
    checks (as an older version or another tool may have left them)."""
    cids = seed_project(sqlite_store, "plain", n_items=2, systems=("sys\u202eA", "sysB"))
    with sqlite_store.transaction() as conn:
        conn.execute(schema.projects.insert().values(name=HOSTILE_PROJECT, description="", created_at=datetime.now(timezone.utc)))
        uid, bob = (conn.execute(schema.users.insert().values(name=name, name_key=user_name_key(name), role="annotator",
                                                              created_at=datetime.now(timezone.utc))).inserted_primary_key[0]
                    for name in (HOSTILE_USER, "bob"))
        conn.execute(schema.captions.update().where(schema.captions.c.id == cids[0]).values(text=HOSTILE_CAPTION))
    save_judgement(sqlite_store, cids[0], uid, label="accurate")
    save_judgement(sqlite_store, cids[0], bob, label="inaccurate", error_types=("object",))
    return sqlite_store


def test_projects_and_users_list_show_escapes_not_raw_controls(hostile_store):
    shown = {}
    for args in (["projects"], ["users", "list"], ["disagreements", "--project", "plain"]):
        proc = _cli(hostile_store.url, *args)
        assert proc.returncode == 0, proc.stderr
        assert _unsafe(proc.stdout) == [], (args, proc.stdout)
        assert "\\x1b" in proc.stdout or "\\u202e" in proc.stdout, proc.stdout
        shown[args[0]] = proc.stdout
    listed = shown["projects"]
    assert printable(HOSTILE_PROJECT) in listed and "proj\\x1b[31mRED\\x1b]0;owned\\x07\\u202eevil\\u200b" in listed
    users = shown["users"]
    assert "ann\\x1b[2J\\rroot\\x9b1m\\x7f\\u2028x" in users
    queue = shown["disagreements"]
    assert "\t" in queue and "a dog\\x1b[8m hidden \\u2066and\\u2069 \\u202eparked" in queue  # tabs still separate fields


def _in_process(capsys, url: str, *args: str) -> subprocess.CompletedProcess:
    """The command line called in this process (JSON through a real process: test_one_json_sweep_...)."""
    code = main(["--db", url, *args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["annotator", *args], code, out.out, out.err)


def test_json_output_is_terminal_safe_and_parses_to_the_stored_strings(hostile_store, capsys):
    projects = _in_process(capsys, hostile_store.url, "projects", "--json")
    users = _in_process(capsys, hostile_store.url, "users", "list", "--json")
    queue = _in_process(capsys, hostile_store.url, "disagreements", "--project", "plain", "--json")
    for proc in (projects, users, queue):
        assert proc.returncode == 0, proc.stderr
        assert _unsafe(proc.stdout) == []
    assert HOSTILE_PROJECT in [p["project"] for p in _strict_loads(projects.stdout)]
    assert HOSTILE_USER in [u["name"] for u in _strict_loads(users.stdout)]
    rows = _strict_loads(queue.stdout)
    assert [r["text"] for r in rows] == [HOSTILE_CAPTION] and rows[0]["system"] == "sys\u202eA"
    assert "\\u202e" in projects.stdout and "\\u001b" in projects.stdout


def test_errors_and_usage_messages_are_escaped(hostile_store):
    unknown = _cli(hostile_store.url, "agreement", "--project", "nope\x1b]2;title\x07")
    assert unknown.returncode == 2 and _unsafe(unknown.stderr) == [] and "nope\\x1b]2;title\\x07" in unknown.stderr
    usage = _cli(hostile_store.url, "tables", "--project", "plain", "--layer", "adjudicated", "--order", "x\x1b[5m")
    assert usage.returncode == 2 and _unsafe(usage.stderr) == [] and "x\\x1b[5m" in usage.stderr


def test_table_text_on_standard_output_is_exact_when_piped(hostile_store, tmp_path):
    """Data formats keep the stored text byte for byte when standard output is a file or a pipe."""
    proc = _cli(hostile_store.url, "disagreements", "--project", "plain", "--format", "csv")
    assert proc.returncode == 0 and HOSTILE_CAPTION in proc.stdout
    exported = _cli(hostile_store.url, "export", "--project", "plain", "--format", "jsonl", piped=True)
    assert _unsafe(exported.stdout) == []  # JSON lines: escaped, and the same values
    assert HOSTILE_CAPTION in {s for line in exported.stdout.splitlines() for s in _strings(_strict_loads(line))}


def _strings(value):
    """Every string inside a parsed JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_printable_and_json_text_on_every_kind_of_character():
    sample = "tab\there\nnew line é 漢字 👩\u200d👩 \U000e0041 \ud800 \x00\x85"
    shown = printable(sample)
    assert _unsafe(shown) == [] and shown.startswith("tab\there\nnew line é 漢字 👩\\u200d👩 \\U000e0041 \\ud800 \\x00\\x85")
    text = json_text({"s": sample, "nan": float("nan"), "inf": [float("inf"), -float("inf"), 1.5]})
    assert _unsafe(text) == []
    assert _strict_loads(text) == {"s": sample, "nan": None, "inf": [None, None, 1.5]}


@pytest.fixture(scope="module")
def sample_url(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('sample') / 'annotator.db'}"
    store = open_store(url)
    load_sample(store)
    store.dispose()
    return url


def test_disagreements_json_has_null_where_it_printed_nan(sample_url):
    proc = _cli(sample_url, "disagreements", "--project", "sample", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "NaN" not in proc.stdout
    rows = _strict_loads(proc.stdout)
    open_rows = [r for r in rows if not r["adjudicated"]]
    assert open_rows and all(r["adjudicated_label"] is None and r["adjudicated_by"] is None for r in open_rows)


SWEEP = [
    ["projects"],
    ["users", "list"],
    ["init"],
    ["agreement", "--project", "sample"],
    ["disagreements", "--project", "sample"],
    ["tables", "--project", "sample", "--layer", "adjudicated"],
    ["tables", "--project", "sample", "--annotator", "sample-ann"],
    ["diversity", "--project", "sample"],
    ["content-selection", "--project", "sample", "--runs", "1"],
    ["rescore", "--project", "sample", "--system", "sat-attn", "--metrics", "bleu,cider"],
    ["corrections", "list", "--project", "sample"],
    ["human-scores", "list", "--project", "sample"],
]


@pytest.mark.parametrize("args", SWEEP, ids=[" ".join(a) for a in SWEEP])
def test_every_json_output_parses_strictly(sample_url, capsys, args):
    assert main(["--db", sample_url, *args, "--json"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    _strict_loads(out)
    assert _unsafe(out) == []


def test_one_json_sweep_also_through_a_real_process(sample_url):
    proc = _cli(sample_url, "agreement", "--project", "sample", "--json")
    assert proc.returncode == 0, proc.stderr
    report = _strict_loads(proc.stdout)
    assert report["annotators"] == ["sample-ann", "sample-ben"]




def test_commands_print_only_through_the_command_context():
    """Handlers write through ctx.emit / ctx.note / ctx.data_out, where the escaping happens, never on their own."""
    offenders = []
    for path in sorted((ROOT / "annotator" / "commands").glob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if "print(" in code or "sys.stderr" in code or "sys.stdout.write" in code:
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert offenders == []
