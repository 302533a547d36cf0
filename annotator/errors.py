"""Exceptions shared by the whole core.

Every error a user can cause carries a message that names *what* was wrong and
*where* (file and line, record id, user name), so the CLI and the pages can show
it as it is.
"""

from __future__ import annotations


class AnnotatorError(Exception):
    """Base class of every error annotator raises on purpose."""

    #: Exit code the CLI uses for this kind of error.
    exit_code = 1


class InputError(AnnotatorError):
    """Bad input: a malformed file, an unknown label, a path outside the root.

    ``source`` names the file (or other input) and ``location`` the line or
    record inside it; both end up in the message.
    """

    exit_code = 2

    def __init__(self, message: str, source: str | None = None, location: str | int | None = None):
        self.detail = message
        self.source = source
        self.location = location
        where = ""
        if source is not None:
            where = str(source)
            if location is not None:
                where += f", {location if isinstance(location, str) else f'line {location}'}"
            where += ": "
        super().__init__(where + message)


class NotFound(AnnotatorError):
    """A project, item, caption, user or system that does not exist."""

    exit_code = 2


class PermissionDenied(AnnotatorError):
    """The current user's role does not allow this action."""

    exit_code = 3


class AuthenticationFailed(AnnotatorError):
    """Wrong user name or password (deliberately not saying which)."""

    exit_code = 3


class AccountLocked(AuthenticationFailed):
    """Too many failed logins; the account is locked for a while."""


class SessionEnded(AuthenticationFailed):
    """A logged-in session is no longer valid: the account's password, role or access changed."""


class StoreUnavailable(AnnotatorError):
    """The database cannot be reached (server down, file locked too long)."""

    exit_code = 4


class CaptionChanged(AnnotatorError):
    """A save made for one caption found another under its id: the database was restored or the project
    imported again since the page showed it (annotator.store.stamps). Nothing was stored."""

    exit_code = 2


class GuardViolation(AnnotatorError):
    """A correction breaks a conservative-correction rule and has no override."""

    exit_code = 2


class Conflict(AnnotatorError):
    """Someone else changed what this action was planned on while it was being planned; nothing was written,
    and running it again plans it afresh."""

    exit_code = 5


class JudgementChanged(Conflict):
    """A save made from a page that showed an older state of the judgement: another tab, window or lead saved
    a newer one since. Nothing was written. ``shown`` is the revision the page showed (0: none) and
    ``current`` the judgement stored now (annotator.model.Judgement, None when there is none any more), so a
    page can show it and offer to load it."""

    def __init__(self, message: str, *, shown: int = 0, current=None):
        super().__init__(message)
        self.shown = shown
        self.current = current


class MetricUnavailable(AnnotatorError):
    """A metric cannot run here (METEOR and PTB tokenisation need Java); the message says what is missing."""


class MetricInputError(InputError, ValueError):
    """Captions, references or samples that cannot be scored (wrong lengths, no references, an unknown metric)."""


def shorten(value, limit: int = 60) -> str:
    """``value`` as text, cut to ``limit`` characters with an ellipsis (for messages about huge input)."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
