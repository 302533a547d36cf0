"""Image roots lie in folders an administrator allows (ANNOTATOR_IMAGE_ROOTS; by default the data directory and,
for imports run from the command line, the folder they name).

A lead cannot point a project at ``/`` from the Data page, a JSONL header cannot name ``/etc``, a symlink cannot
lead out of an allowed folder, and a project whose root was set before (or is otherwise outside) is shown
without its photos and with a message instead of any server file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import update

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.cli import main
from annotator.errors import InputError
from annotator.images import check_image_root, render_item_png
from annotator.io import import_jsonl
from annotator.store.projects import load_project, project_names
from annotator.store.schema import projects
from tests.apptest_helpers import page_test, seed_project, visible

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PHOTO = (10, 200, 30)


@pytest.fixture
def policy(monkeypatch, tmp_path):
    """The default policy with a data directory of this test's own; returns that directory."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.delenv("ANNOTATOR_IMAGE_ROOTS", raising=False)
    monkeypatch.setenv("ANNOTATOR_DATA_DIR", str(data))
    return data


def _photo(folder: Path, name: str = "a.png") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), PHOTO).save(folder / name)
    return folder / name


def _shows_photo(png: bytes) -> bool:
    import io
    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGB").getpixel((32, 40)) == PHOTO


def _jsonl(path: Path, header_root: str | None) -> Path:
    rows = [{"format": "annotator-jsonl", "version": 1, "image_root": header_root}] if header_root else []
    rows.append({"key": "a.png", "image": "a.png", "width": 64, "height": 48,
                 "captions": [{"system": "s", "text": "a green square"}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(store, capsys, *args):
    rc = main(["--db", store.url, *args])
    return rc, capsys.readouterr().err


def test_data_page_refuses_root_slash(sqlite_store, policy):
    at = page_test("data", sqlite_store.url, user="lea", role="lead").run()
    at.selectbox(key="data_format").set_value("flickr30k").run()
    at.text_input(key="data_flickr30k_project").set_value("f30k")
    at.text_input(key="data_f30k_root").set_value(str(FIX / "flickr30k"))
    at.text_input(key="data_flickr30k_root").set_value("/")
    at.button[0].click().run()
    assert not at.exception
    message = " ".join(visible(e.value) for e in at.error)
    assert "image root '/'" in message and repr(str(policy.resolve())) in message
    assert "ANNOTATOR_IMAGE_ROOTS" in message
    assert project_names(sqlite_store) == []
    # A folder inside the data directory is fine.
    _photo(policy / "f30k-images", "1001.jpg")
    at.text_input(key="data_flickr30k_root").set_value(str(policy / "f30k-images"))
    at.button[0].click().run()
    assert not at.error and project_names(sqlite_store) == ["f30k"]


def test_jsonl_header_naming_etc_is_refused(store, tmp_path, capsys, policy):
    rc, err = _cli(store, capsys, "import", "jsonl", "--project", "p", str(_jsonl(tmp_path / "p.jsonl", "/etc")))
    assert rc == 2 and "p.jsonl" in err and "image root '/etc'" in err and repr(str(policy.resolve())) in err
    assert project_names(store) == []
    # The same file uploaded through the browser (an absolute header root is still read) is refused as well.
    with pytest.raises(InputError, match="image root '/etc'"):
        import_jsonl(store, "p", _jsonl(tmp_path / "up.jsonl", "/etc"), relative_header_root=False)
    # A header root inside the JSONL file's own folder is the import's folder: allowed, and its photos show.
    _photo(tmp_path / "images")
    rc, err = _cli(store, capsys, "import", "jsonl", "--project", "p", str(_jsonl(tmp_path / "p.jsonl", "images")))
    assert rc == 0, err
    project = load_project(store, "p")
    assert project.image_root == str((tmp_path / "images").resolve())
    assert _shows_photo(render_item_png(project.image_root, project.items[0], trusted_root=project.trusted_image_root))


def test_cli_image_root_flag_is_the_import_folder_unless_the_admin_lists_folders(store, tmp_path, capsys, policy,
                                                                                 monkeypatch):
    outside = tmp_path / "photos"
    _photo(outside)
    jsonl = _jsonl(tmp_path / "p.jsonl", None)
    monkeypatch.setenv("ANNOTATOR_IMAGE_ROOTS", str(policy))  # the administrator's list: only the data directory
    rc, err = _cli(store, capsys, "import", "jsonl", "--project", "p", str(jsonl), "--image-root", str(outside))
    assert rc == 2 and f"image root {str(outside)!r}" in err and "ANNOTATOR_IMAGE_ROOTS" in err
    assert project_names(store) == []
    monkeypatch.delenv("ANNOTATOR_IMAGE_ROOTS")  # the default: someone with shell access may name any folder
    rc, err = _cli(store, capsys, "import", "jsonl", "--project", "p", str(jsonl), "--image-root", str(outside))
    assert rc == 0, err
    project = load_project(store, "p")
    assert project.trusted_image_root == str(outside.resolve())
    assert _shows_photo(render_item_png(project.image_root, project.items[0], trusted_root=project.trusted_image_root))
    # Once an administrator lists the folders, that list is the whole truth, also for the photos already imported.
    monkeypatch.setenv("ANNOTATOR_IMAGE_ROOTS", str(policy))
    with pytest.raises(InputError, match="ANNOTATOR_IMAGE_ROOTS"):
        render_item_png(project.image_root, project.items[0], trusted_root=project.trusted_image_root)


def test_symlink_out_of_the_allowed_folder_is_refused(store, tmp_path, capsys, policy):
    outside = tmp_path / "elsewhere"
    _photo(outside)
    (policy / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InputError) as exc:
        check_image_root(policy / "link")
    assert f"image root {str(policy / 'link')!r} (which is {str(outside.resolve())!r})" in str(exc.value)
    # Through the browser's path (no trust): refused at import, nothing stored.
    with pytest.raises(InputError, match="which is"):
        import_jsonl(store, "p", _jsonl(tmp_path / "p.jsonl", None), image_root=policy / "link",
                     relative_header_root=False)
    assert project_names(store) == []
    # A link that pointed inside when the project was imported and is turned outside afterwards: no photo.
    inside = policy / "images"
    _photo(inside)
    (policy / "moving").symlink_to(inside, target_is_directory=True)
    import_jsonl(store, "p", _jsonl(tmp_path / "p.jsonl", None), image_root=policy / "moving")
    project = load_project(store, "p")
    project.image_root = str(policy / "moving")  # as stored before the link was resolved at import
    (policy / "moving").unlink()
    (policy / "moving").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InputError, match="which is"):
        render_item_png(project.image_root, project.items[0])


def test_existing_project_outside_the_allowed_folders_shows_a_message_not_the_file(sqlite_store, policy):
    caps = seed_project(sqlite_store, "demo", n_items=2, image_root=str(policy / "img"), with_images=True)
    add_user(sqlite_store, "ann1", "annotator")
    assign(sqlite_store, "demo", ["ann1"], double_fraction=0)
    assert caps
    with sqlite_store.transaction() as conn:  # a root set before roots were checked
        conn.execute(update(projects).where(projects.c.name == "demo").values(image_root="/etc"))
    at = page_test("annotate", sqlite_store.url, user="ann1", role="annotator", project="demo",
                   create_user=False).run()
    assert not at.exception, at.exception
    notes = " ".join(visible(c.value) for c in at.caption)
    assert "The photo cannot be shown" in notes and "image root '/etc'" in notes
    assert len(at.get("image")) == 1  # a blank canvas in the photo's place, the page's boxes drawn over it
    assert any('data-testid="ann-box-overlay"' in h.value for h in at.html)
    project = load_project(sqlite_store, "demo")
    with pytest.raises(InputError, match="image root '/etc'"):
        render_item_png(project.image_root, project.items[0], trusted_root=project.trusted_image_root)
