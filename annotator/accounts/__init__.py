"""Accounts: who may do what, who is logged in, and where a log-in opens.

One module per job, imported by its own name (``from annotator.accounts.access import require_role``):

- :mod:`.access`: the guard every page and core reader calls (which role may open which page and act on a
  project), and who counts as a local client (its list of forwarding headers is ``forwarding_headers.toml``);
- :mod:`.auth`: password hashing, log-in with throttling and lock-out, account changes, session claims;
- :mod:`.people`: what the People page adds to auth (generated passwords, the admin self-lock-out guard, the
  record of account changes as a table);
- :mod:`.sessions`: log-in sessions in the store behind a signed cookie, and the places a user's log-in remembers;
- :mod:`.landing`: where a log-in opens.

This file imports none of them, so that a core module asking for the guard does not load password hashing,
sessions or pandas with it.
"""
