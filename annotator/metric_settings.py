"""How a project's caption metrics read the text: its tokenisation setting.

Two modes, the project setting ``metric_tokenize`` (``none`` unless a lead
sets it):

* ``none`` — raw text, case and punctuation kept; each scorer splits the
  strings as coco-caption's scorers do when handed raw text. This is how the
  error-analysis study scored its captions, so its baseline and corrected
  scores are reproduced in this mode.
* ``ptb`` — coco-caption's PTBTokenizer first (lower case, punctuation
  dropped; needs Java), as the COCO caption evaluation server and the papers
  that report its numbers do.

Every command and page that scores captions takes the project's mode unless
told otherwise (``--tokenize``), prints it above its table
(:func:`tokenize_header`) and every score carries it in its signature
(``tok=none`` / ``tok=ptb``).
"""

from __future__ import annotations

from .accounts.access import LEADS, require_role
from .errors import InputError
from .tokenize.ptb import TOKENIZERS
from .model import Role

#: The project setting that holds the metric tokenisation.
TOKENIZE_SETTING = "metric_tokenize"
DEFAULT_TOKENIZE = "none"

#: What each mode does, in a few words (table headers, help texts, the page).
TOKENIZE_DESCRIPTIONS = {
    # The study never states a tokenisation; raw text is what reproduces its released scores (to 1e-6:
    # tests/fidelity/test_study_scores.py).
    "none": "raw text, case and punctuation kept; reproduces the error-analysis study's released scores",
    "ptb": "coco-caption's PTB tokenizer, lower case, punctuation dropped (the COCO evaluation server's setting)",
}


def check_tokenize(mode: str) -> str:
    """``mode`` in lower case when it is a known tokenisation; InputError naming the choices otherwise."""
    name = str(mode).strip().lower()
    if name not in TOKENIZERS:
        raise InputError(f"unknown metric tokenisation {mode!r}; choose one of {', '.join(TOKENIZERS)}")
    return name


def project_tokenize(store, project: str) -> str:
    """The metric tokenisation of ``project`` (``none`` unless a lead set another)."""
    from .store.project_settings import get_setting
    from .store.projects import project_id
    with store.read() as conn:
        return get_setting(conn, project_id(conn, project), TOKENIZE_SETTING, DEFAULT_TOKENIZE)


def set_project_tokenize(store, project: str, mode: str, *, actor_role: Role | str = Role.ADMIN) -> str:
    """Set the metric tokenisation of ``project`` (lead/admin only); returns the mode stored."""
    from .store.project_settings import set_setting
    from .store.projects import project_id
    require_role(actor_role, LEADS, "changing how metrics tokenise")
    mode = check_tokenize(mode)
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, project), TOKENIZE_SETTING, mode)
    return mode


def resolve_tokenize(store, project: str, given: str | None) -> str:
    """``given`` when a caller chose a tokenisation, else the project's."""
    return check_tokenize(given) if given is not None else project_tokenize(store, project)


def tokenize_header(mode: str) -> str:
    """The line printed above every metric table: ``tokenisation: ptb (coco-caption's PTB tokenizer, …)``."""
    mode = check_tokenize(mode)
    return f"tokenisation: {mode} ({TOKENIZE_DESCRIPTIONS[mode]})"


#: The tokenisation each reproduced paper's metric tables used, and the tables: the lexical-gap study scored with
#: the coco-caption evaluation (COCOEvalCap), which always runs the PTB tokenizer first.
PAPER_TOKENIZE = {"lexical-gap": ("ptb", "the lexical-gap study's Tables 1 and 5 (scored with coco-caption's "
                                         "evaluation, which tokenises)")}


def paper_tokenize_note(mode: str, paper: str) -> str:
    """Which paper's tables a command's tokenisation reproduces: printed after :func:`tokenize_header` by the
    commands that reproduce ``paper`` (rich-sparse and correlate: the lexical-gap study)."""
    wanted, tables = PAPER_TOKENIZE[paper]
    if check_tokenize(mode) == wanted:
        return f"reproduces {tables}"
    return f"does not reproduce {tables}: --tokenize {wanted} (or the project setting {wanted}) does"


__all__ = ["TOKENIZE_SETTING", "DEFAULT_TOKENIZE", "TOKENIZE_DESCRIPTIONS", "PAPER_TOKENIZE", "check_tokenize",
           "paper_tokenize_note", "project_tokenize", "set_project_tokenize", "resolve_tokenize", "tokenize_header"]
