"""Line-aligned importer: exact lines, keys, second system, image sizes, all-or-nothing on bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image

from annotator.errors import InputError
from annotator.io import import_lines
from annotator.io.lines import line_key, read_lines_project
from annotator.io.textfiles import read_lines
from annotator.store.projects import captions_of_system, load_project, project_id
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures" / "lines"
CAPS_A, CAPS_B = FIX / "captions_a.txt", FIX / "captions_b.txt"
REFS = [FIX / "refs1.txt", FIX / "refs2.txt"]


def test_read_lines_keeps_text_exactly(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes("\ufeff  lead and trail  \r\nA\tb\x0cc\r\n\nlast line without terminator".encode("utf-8"))
    # BOM dropped, CR LF removed, inner form feed kept (it is not a line break for multi-bleu), blank line kept.
    assert read_lines(p) == ["  lead and trail  ", "A\tb\x0cc", "", "last line without terminator"]
    p.write_bytes(b"one\ntwo\n")
    assert read_lines(p) == ["one", "two"]
    p.write_bytes(b"")
    assert read_lines(p) == []


def test_read_lines_rejects_bad_utf8(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"fine\nstill fine\nbroken \xff here\n")
    with pytest.raises(InputError) as info:
        read_lines(p)
    assert "bad.txt, line 3" in str(info.value) and "UTF-8" in str(info.value)


def test_line_keys():
    assert line_key(0) == "line-000001"
    assert line_key(999_999) == "line-1000000"


def test_import_without_image_list_then_second_system(store):
    r = import_lines(store, "p", "sys-a", CAPS_A, REFS)
    assert (r.items_created, r.references, r.captions) == (3, 6, 3)
    r2 = import_lines(store, "p", "sys-b", CAPS_B, REFS)
    assert (r2.items_created, r2.references, r2.captions) == (0, 0, 3)
    proj = load_project(store, "p")
    assert [i.key for i in proj.items] == ["line-000001", "line-000002", "line-000003"]
    second = proj.items[1]
    # Whitespace inside and at the end of a line is kept as written.
    assert [c.text for c in second.captions] == ["Two  people   ride bikes ", "A woman on a bicycle"]
    assert [c.system for c in second.captions] == ["sys-a", "sys-b"]
    # CR LF of refs2.txt is a terminator, not text.
    assert [r.text for r in second.references] == ["Two cyclists on a road", "Two people riding bicycles"]
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, "p"), "sys-b")
    assert [(r.line_no, r.text) for r in rows] == [(0, "A dog plays in a field"), (1, "A woman on a bicycle"),
                                                   (2, "A car on a street")]


def test_image_list_keys_and_sizes(store, tmp_path):
    root = tmp_path / "imgs"
    root.mkdir()
    Image.new("RGB", (64, 48)).save(root / "dog.jpg")
    Image.new("RGB", (30, 90)).save(root / "car.jpg")  # bikes.jpg is missing on purpose
    import_lines(store, "p", "sys-a", CAPS_A, REFS, images=FIX / "images.txt", image_root=root)
    proj = load_project(store, "p")
    assert [(i.key, i.image, i.width, i.height) for i in proj.items] == [
        ("dog.jpg", "dog.jpg", 64, 48), ("bikes.jpg", "bikes.jpg", None, None), ("car.jpg", "car.jpg", 30, 90)]
    assert proj.image_root == str(root.resolve())


def test_mismatched_line_counts_name_files_and_counts(store):
    e = refused(store, lambda: import_lines(store, "p", "s", CAPS_A, [REFS[0], FIX / "short.txt"]),
                "short.txt", "2 lines", "captions_a.txt", "has 3")
    assert e.source.endswith("short.txt")
    refused(store, lambda: import_lines(store, "p", "s", CAPS_A, REFS, images=FIX / "short.txt"), "image list", "2 lines")


def test_bad_image_names_are_refused(store, tmp_path):
    for bad, fragment in (("../etc/passwd", "leaves the image root"), ("/abs/x.jpg", "absolute"), ("", "empty image path")):
        lst = tmp_path / "imgs.txt"
        lst.write_text(f"a.jpg\n{bad}\nc.jpg\n", encoding="utf-8")
        e = refused(store, lambda: import_lines(store, "p", "s", CAPS_A, REFS, images=lst), fragment, "imgs.txt, line 2")
        assert e.location == 2
    lst = tmp_path / "dup.txt"
    lst.write_text("a.jpg\nb.jpg\na.jpg\n", encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s", CAPS_A, REFS, images=lst), "listed twice", "line 3")


def test_conflicts_with_stored_data_roll_back(store, tmp_path):
    import_lines(store, "p", "sys-a", CAPS_A, REFS)
    # Same system again: every item already has a caption of sys-a.
    refused(store, lambda: import_lines(store, "p", "sys-a", CAPS_B, REFS), "already has a caption")
    # Different references for existing items.
    other = tmp_path / "other_refs.txt"
    other.write_text("x\ny\nz\n", encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "sys-b", CAPS_B, [other]), "references differ")
    # Keyed by image name now, by line before: refused instead of creating a parallel set of items.
    refused(store, lambda: import_lines(store, "p", "sys-b", CAPS_B, REFS, images=FIX / "images.txt"), "keyed differently")


def test_missing_or_empty_files(store, tmp_path):
    refused(store, lambda: import_lines(store, "p", "s", tmp_path / "nope.txt", REFS), "nope.txt", "cannot read")
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s", empty, REFS), "empty")


def test_reader_does_not_touch_images_when_sizes_off(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    shutil.copy(FIX / "images.txt", tmp_path / "images.txt")
    proj = read_lines_project("p", "s", CAPS_A, REFS, images=tmp_path / "images.txt", image_root=root, read_sizes=False)
    assert [i.width for i in proj.items] == [None, None, None]
    assert proj.systems == ["s"]


def test_a_system_s_samples_come_as_one_captions_file_each(store, tmp_path):
    import_lines(store, "p", "sys-a", CAPS_A, REFS)
    n = len(read_lines(CAPS_A))
    second = tmp_path / "captions_a_sample1.txt"
    second.write_text("".join(f"another description {k}\n" for k in range(n)), encoding="utf-8")
    r = import_lines(store, "p", "sys-a", second, REFS, sample=1)
    assert (r.items_created, r.references, r.captions) == (0, 0, n)
    first = load_project(store, "p", all_samples=True).items[0]
    assert [(c.n, c.line) for c in first.captions] == [(0, 0), (1, 0)]  # each sample counts its own lines
    assert first.captions[1].text == "another description 0"
    with store.read() as conn:  # annotation, judgements and corrections read sample 0 only
        assert [r.text for r in captions_of_system(conn, project_id(conn, "p"), "sys-a")] == read_lines(CAPS_A)
    # The same sample again, and a negative one, are refused naming the file; nothing is stored.
    refused(store, lambda: import_lines(store, "p", "sys-a", second, REFS, sample=1), "captions_a_sample1.txt",
            "item 'line-000001'", "system 'sys-a' already has a caption with n = 1 for this item")
    refused(store, lambda: import_lines(store, "p", "sys-a", second, REFS, sample=-1), "captions_a_sample1.txt",
            "--sample (the sample index n of these captions) must be a whole number of 0 or more, got -1")


def test_sample_flag_on_the_command_line(store, tmp_path, capsys):
    from annotator.cli import main
    second = tmp_path / "s2.txt"
    second.write_text("".join(f"x {k}\n" for k in range(len(read_lines(CAPS_A)))), encoding="utf-8")
    for path, extra in ((CAPS_A, []), (second, ["--sample", "2"])):
        code = main(["--db", store.url, "import", "lines", "--project", "p", "--system", "s", "--captions", str(path),
                     "--references", *map(str, REFS), *extra])
        assert code == 0, capsys.readouterr()
    assert {c.n for i in load_project(store, "p", all_samples=True).items for c in i.captions} == {0, 2}
