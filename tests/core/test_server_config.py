"""The app server's settings (.streamlit/config.toml): the ones the product relies on, and that Streamlit knows them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from streamlit import config as st_config

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def _settings() -> dict[str, object]:
    data = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    return {f"{section}.{key}": value for section, options in data.items() for key, value in options.items()}


@pytest.mark.parametrize("option, value", [
    ("server.address", "127.0.0.1"),           # local unless a team deploys it behind a proxy
    ("server.enableXsrfProtection", True),
    ("client.showErrorDetails", "type"),       # tracebacks stay in the server log
    ("runner.postScriptGC", False),            # a full collection after every run cost ~90 ms per Save & next
])
def test_setting_is_set_and_known_to_streamlit(option, value):
    assert _settings()[option] == value
    # An option Streamlit no longer knows would be ignored with a warning only.
    assert option in st_config._config_options_template, option


def test_every_setting_is_a_streamlit_option():
    unknown = [o for o in _settings() if o not in st_config._config_options_template]
    assert not unknown
