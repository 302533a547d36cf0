"""Keyboard flow shared by the judging pages (Annotate, Adjudication, Correction): keys become clicks on the page's widgets.

A page gives its widgets fixed keys with one prefix (``<prefix>_label`` radio, ``<prefix>_save``,
``<prefix>_prev``, ``<prefix>_next``, ``<prefix>_skip`` buttons, one checkbox per error type) and shows
the caption in an element with ``data-testid=<caption_testid>``; :func:`keyboard_script` returns the
script (annotator/ui/widgets/keys.js) that maps keys to clicks on them, found by their
``st-key-*`` class, holding keys typed during a rerun until the page shows its effect. Inputs inside a
form change in the browser only, so their keys take effect at once; the form's buttons send them.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The page scripts' frame loop (window.annotatorOnFrames), put before each script that uses it.
FRAMES_JS = Path(__file__).with_name("frames.js").read_text(encoding="utf-8")
#: The script; its config goes where _CONFIG_SLOT stands.
_KEYBOARD_JS = Path(__file__).with_name("keys.js").read_text(encoding="utf-8")
_CONFIG_SLOT = "__ANNOTATOR_KEYS_CONFIG__"


def keyboard_script(*, prefix: str, caption_testid: str, keys: dict[str, str], types: dict[str, str],
                    labels: list[str], state_name: str, type_keys_set: bool = False) -> str:
    """The page script for ``keys`` (key → action: ``accurate``, ``inaccurate``, ``type:<id>``, ``skip``,
    ``boxes``, ``references``, ``note`` (focus the ``<prefix>_note`` field), ``click:<name>`` (the button
    ``<prefix>_<name>``); Enter saves, ←/→ move, Ctrl+Enter saves from a field) on the widgets named with ``prefix``.

    ``types`` maps a type id to its checkbox key; ``state_name`` is the window property holding the
    handler's state (tests wait on it). One handler per prefix is installed in the document; it acts
    only while its page's save button is on screen. With ``type_keys_set`` a type's key sets its box: the
    first press on a box already ticked (a pre-filled decision) keeps it, a second press clears it.
    """
    config = json.dumps({"keys": keys, "labels": labels, "types": types, "prefix": prefix,
                         "captionTestId": caption_testid, "stateName": state_name,
                         "configName": f"__{prefix}KeyConfig", "typeKeysSet": type_keys_set})
    return "<script>\n" + FRAMES_JS + _KEYBOARD_JS.replace(_CONFIG_SLOT, config) + "</script>"


def panel_state_html(prefix: str, label_key: str, type_keys) -> str:
    """A hidden marker to draw after a judging panel: which run of the page drew it (a counter per page
    session) and the values its widgets were given: the label and the ticked checkboxes.

    Streamlit applies a value the server set on a widget a render or two after the widget is drawn, so a
    click on it before then is overwritten. The key handler holds keys typed after a save until the marker
    of the run that save started is on the page and the widgets show its values (widgets/keys.js).
    """
    import html

    import streamlit as st

    run_key = f"{prefix}_panel_run"
    st.session_state[run_key] = st.session_state.get(run_key, 0) + 1
    label = st.session_state.get(label_key) or ""
    ticked = " ".join(k for k in type_keys if st.session_state.get(k))
    return (f'<span hidden data-panel-state="{html.escape(prefix)}" data-run="{st.session_state[run_key]}" '
            f'data-label="{html.escape(str(label))}" data-ticked="{html.escape(ticked)}"></span>')
