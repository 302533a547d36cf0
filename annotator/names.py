"""What a name may be made of: one rule for project, system, user, score and item names.

A name is stored in Unicode NFC without surrounding white space, so the same
name typed on two systems (composed ``é`` or ``e`` + combining accent) is one
name. Refused, with a message that says which character:

* control characters (C0 such as tab, newline and ESC, DEL, C1), line and
  paragraph separators;
* bidirectional embeddings, overrides and isolates (U+202A–U+202E,
  U+2066–U+2069): they make a name display as a different one;
* names with nothing visible once white space, invisible format characters
  (zero-width space, joiners, soft hyphen …) and blank fillers are set aside;
* names longer than their column allows.

How names are *compared* (case, compatibility forms) is decided where they are
looked up; user names by :func:`annotator.store.users.user_name_key`.

Free text (captions, references, labels) follows :func:`text_problem`: line
breaks and tabs are allowed there, other control characters are not, because
spreadsheets, terminals and XML cannot carry them.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import InputError

__all__ = ["BIDI_CONTROLS", "LONE_SURROGATE", "clean_name", "text_problem", "line_problem", "find_refused_in_text",
           "describe_character"]

#: Characters that reorder the text around them.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Letters that render as blank space (Hangul fillers, Braille blank, Mongolian vowel separator).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
# In free text: C0 controls except tab, LF and CR; DEL and C1; lone surrogates; the non-characters U+FFFE/U+FFFF
# (none of which XML 1.0 — an XLSX sheet — can hold, or which a terminal would act on).
_REFUSED_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# In names, additionally tab, LF, CR, the line and paragraph separators and the bidi controls.
#: An unpaired surrogate: Python text can hold one, no UTF-8 file or database can.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_REFUSED_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def describe_character(ch: str) -> str:
    """``U+001B`` (with ``(NUL)`` for U+0000), for messages about a character that cannot be shown."""
    return f"U+{ord(ch):04X}" + (" (NUL)" if ch == "\x00" else "")


def _character_problem(ch: str) -> str:
    if "\ud800" <= ch <= "\udfff":
        return "an invalid character (an unpaired surrogate)"
    if ch in BIDI_CONTROLS:
        return f"the control character {describe_character(ch)} (it changes the direction of the text)"
    return f"the control character {describe_character(ch)}"


#: ``find_refused_in_text(text)`` is a match (truthy) when ``text`` holds a character free text may not hold.
find_refused_in_text = _REFUSED_IN_TEXT.search


def text_problem(text: str) -> str | None:
    """What makes ``text`` unfit as free text ("the control character U+001B"), or None when it is fine."""
    m = _REFUSED_IN_TEXT.search(text)
    return None if m is None else _character_problem(m.group())


def line_problem(text: str) -> str | None:
    """What makes ``text`` unfit as one line of words shown inside other text (a name, a suggested fix): the
    characters names refuse (control characters including tab and line breaks, line and paragraph separators,
    bidirectional controls), or None when it is fine."""
    m = _REFUSED_IN_NAME.search(text)
    return None if m is None else _character_problem(m.group())


def _visible(ch: str) -> bool:
    return not (ch.isspace() or ch in _BLANK_LETTERS or unicodedata.category(ch) in ("Cf", "Mn", "Me", "Cc"))


def clean_name(value, what: str, source=None, location=None, *, max_len: int | None = None) -> str:
    """``value`` as a stored name (NFC, stripped); InputError naming ``what``, the source and location otherwise.

    ``what`` begins the messages ("a user name cannot be empty", "system
    cannot contain the control character U+001B").
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}", source, location)
    if value.isascii():  # the common case: nothing to normalise, no invisible letters
        text = value.strip()
        bad = _REFUSED_IN_NAME.search(text)
        if text and bad is None and (max_len is None or len(text) <= max_len):
            return text
    bad = LONE_SURROGATE.search(value)
    text = value if bad else unicodedata.normalize("NFC", value).strip()
    if not text:
        raise InputError(f"{what} cannot be empty", source, location)
    bad = bad or _REFUSED_IN_NAME.search(text)
    if bad is not None:
        raise InputError(f"{what} cannot contain {_character_problem(bad.group())}", source, location)
    if max_len is not None and len(text) > max_len:
        raise InputError(f"{what} is {len(text)} characters long; at most {max_len} are allowed", source, location)
    if not any(_visible(ch) for ch in text):
        raise InputError(f"{what} needs at least one visible character", source, location)
    return text


# ------------------------------------------------------------------ e-mail addresses

#: Longest e-mail address (RFC 5321's path limit less its angle brackets), and longest part before the "@".
MAX_EMAIL_LENGTH, MAX_EMAIL_LOCAL_LENGTH = 254, 64
# The address forms Label Studio (Django's e-mail validator) accepts, without quoted local parts or address
# literals: a dot-atom before the "@", host name labels with a top-level domain of two letters or more after it.
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_EMAIL_DOMAIN = re.compile(r"((?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+(xn--[A-Za-z0-9-]{1,59}|[A-Za-z]{2,63})")


def check_email(value, source=None, location=None) -> str:
    """``value`` as an account's e-mail address is stored: without surrounding white space and with the domain
    in lower case (as Label Studio stores it); InputError naming what is wrong.

    Addresses are compared as a whole, regardless of case (:func:`email_key`): "Ann@Lab.org" and "ann@lab.org"
    are one address, "ann@lab.org" and "ann@evil.org" two."""
    if not isinstance(value, str):
        raise InputError(f"an e-mail address must be text, got {type(value).__name__}", source, location)
    text = value.strip()
    local, at, domain = text.rpartition("@")
    shown = repr(text[:80] + ("…" if len(text) > 80 else ""))
    if not at or not local or not domain:
        raise InputError(f"{shown} is not an e-mail address (NAME@DOMAIN)", source, location)
    if len(text) > MAX_EMAIL_LENGTH or len(local) > MAX_EMAIL_LOCAL_LENGTH:
        raise InputError(f"the e-mail address {shown} is too long (at most {MAX_EMAIL_LENGTH} characters, "
                         f"{MAX_EMAIL_LOCAL_LENGTH} before the '@')", source, location)
    if not _EMAIL_LOCAL.fullmatch(local):
        raise InputError(f"{shown} is not an e-mail address: the part before '@' may hold letters, digits and "
                         "!#$%&'*+/=?^_`{|}~- with single dots between them", source, location)
    if not _EMAIL_DOMAIN.fullmatch(domain):
        raise InputError(f"{shown} is not an e-mail address: {domain[:80]!r} is not a domain name such as "
                         "lab.example.org", source, location)
    return f"{local}@{domain.lower()}"


def email_key(address: str) -> str:
    """The form in which e-mail addresses are compared: the whole address, case-folded."""
    return address.strip().casefold()
