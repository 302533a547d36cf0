"""The Data page's uploaders in Chromium when a file is over the server's upload limit (set to 1 MB here): the
limit is said beside the uploader, the refusal is said in words, and the refused file is not left on the list."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from tests.browser.conftest import signed_in, wait_for_app

pytestmark = pytest.mark.browser

PW = "uploads all the way"


def test_a_file_over_the_limit_is_refused_in_words(app_server, page, tmp_path):
    server = app_server(f"sqlite:///{tmp_path / 'limit.db'}", env={"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "1"})
    store = server.store()
    add_user(store, "ada", "admin", PW)
    store.dispose()
    big = tmp_path / "big-captions.txt"
    big.write_text("a cat sits on a mat\n" * 120_000)  # about 2.4 MB
    small = tmp_path / "captions.txt"
    small.write_text("a cat sits on a mat\n")
    page.set_viewport_size({"width": 1280, "height": 720})
    signed_in(page, server, "ada", PW, path="/data")
    wait_for_app(page)
    form = page.locator('[data-testid="stForm"]')
    uploader = form.locator('[data-testid="stFileUploader"]').filter(has_text="Captions file").first
    expect(form.get_by_text("One file, up to 1 MB each.").first).to_be_visible()
    uploader.locator('input[type="file"]').set_input_files([str(big)])
    refusal = form.get_by_test_id("upload-refusal")
    expect(refusal).to_have_count(1)
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("big-captions.txt was not taken: File must be 1.0MB or smaller.")
    expect(uploader.get_by_test_id("stFileChip")).to_have_count(0)  # the refused file is not listed
    # a file within the limit is taken, and the old refusal goes
    uploader.locator('input[type="file"]').set_input_files([str(small)])
    expect(uploader.get_by_test_id("stFileChip")).to_have_count(1)
    expect(refusal).to_have_count(0)
