"""A spool: a private scratch SQLite file in which an import puts the records a file gives in an order other than
the one it stores them in (a COCO file's captions, boxes and results, scattered over the file, grouped by image),
so that memory holds a batch and not the file. It lives in the temporary folder, apart from the store (whatever
database that is), and is deleted when the import ends; nothing in it is ever part of the store.

A spool holds *bags*: records of a key and a few values, each numbered in the order added. A bag answers what an
importer asks of it: the records of some keys (:meth:`Spool.of_keys`), the keys grouped in the order they first
came (:meth:`Spool.groups`), the first record whose key another bag lacks (:meth:`Spool.first_missing`) or whose
key came before (:meth:`Spool.first_repeat`), whether a key is there (:meth:`Spool.holds`), and two bags of unique
keys side by side in key order (:meth:`Spool.joined`).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from typing import Iterator

#: Records written to the spool at a time, and keys asked for in one query.
_ROWS, _KEYS = 10_000, 500


class Spool:
    """A scratch database of bags (see the module docstring); a context manager that deletes it at the end."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="annotator-spool-", suffix=".sqlite")
        os.close(fd)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE", "cache_size=-8000"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute("BEGIN")
        self._widths: dict[str, int] = {}
        self._pending: dict[str, list] = {}
        self._seq: dict[str, int] = {}
        self._indexed: set[str] = set()

    def bag(self, name: str, values: int, *, indexed: bool = False) -> None:
        """Open the bag ``name`` of records (key, ``values`` values); its name is a plain word of the caller's.
        A bag is indexed by key when first read (fastest for a bag filled before it is read); ``indexed`` indexes
        it at once, for a bag read while it is being filled."""
        if not name.isidentifier():
            raise ValueError(f"not a bag name: {name!r}")
        cols = "".join(f", v{k}" for k in range(values))
        self._db.execute(f"CREATE TABLE {name} (seq INTEGER PRIMARY KEY, key{cols})")
        self._widths[name], self._pending[name], self._seq[name] = values, [], 0
        if indexed:
            self._ready(name)

    def add(self, name: str, key, *values) -> None:
        """Add a record to bag ``name`` (numbered after the ones added before)."""
        pending = self._pending[name]
        pending.append((self._seq[name], key, *values))
        self._seq[name] += 1
        if len(pending) >= _ROWS:
            self._flush(name)

    def count(self, name: str) -> int:
        """How many records were added to bag ``name``."""
        return self._seq[name]

    def _flush(self, name: str) -> None:
        pending = self._pending[name]
        if pending:
            marks = ", ".join("?" * (self._widths[name] + 2))
            self._db.executemany(f"INSERT INTO {name} VALUES ({marks})", pending)
            pending.clear()

    def _ready(self, name: str) -> None:
        """Write what is pending and index the bag by key (once: a bag is read only after it was filled)."""
        self._flush(name)
        if name not in self._indexed:
            self._db.execute(f"CREATE INDEX {name}_key ON {name} (key, seq)")
            self._indexed.add(name)

    def _cols(self, name: str) -> str:
        return "".join(f", v{k}" for k in range(self._widths[name]))

    def of_keys(self, name: str, keys) -> dict:
        """key → [(seq, values…), …] in the order added, for the records of bag ``name`` with one of ``keys``."""
        self._ready(name)
        keys = list(keys)
        out: dict = {}
        for start in range(0, len(keys), _KEYS):
            chunk = keys[start:start + _KEYS]
            marks = ", ".join("?" * len(chunk))
            for key, *rest in self._db.execute(f"SELECT key, seq{self._cols(name)} FROM {name} "
                                               f"WHERE key IN ({marks}) ORDER BY key, seq", chunk):
                out.setdefault(key, []).append(tuple(rest))
        return out

    def groups(self, name: str) -> Iterator[tuple[object, list[tuple]]]:
        """(key, [(seq, values…), …]) of bag ``name``, the keys in the order they first came, each key's records
        in the order added; read as it goes (memory holds one group)."""
        self._ready(name)
        rows = self._db.execute(
            f"SELECT b.key, b.seq{self._cols(name).replace(', v', ', b.v')} FROM {name} b "
            f"JOIN (SELECT key, MIN(seq) AS first FROM {name} GROUP BY key) g ON g.key = b.key "
            "ORDER BY g.first, b.seq")
        key, group = None, []
        for k, *rest in rows:
            if group and k != key:
                yield key, group
                group = []
            key = k
            group.append(tuple(rest))
        if group:
            yield key, group

    def records(self, name: str) -> Iterator[tuple]:
        """(key, seq, values…) of every record of bag ``name`` in the order added, read as it goes."""
        self._flush(name)
        yield from self._db.execute(f"SELECT key, seq{self._cols(name)} FROM {name} ORDER BY seq")

    def holds(self, name: str, key) -> bool:
        """Whether a record of bag ``name`` has ``key`` (for a bag read while it is filled: open it ``indexed``)."""
        self._ready(name)
        return self._db.execute(f"SELECT 1 FROM {name} WHERE key = ? LIMIT 1", (key,)).fetchone() is not None

    def joined(self, name: str, other: str) -> Iterator[tuple]:
        """(key, values…, values of ``other``…) of every record of bag ``name`` in key order, each with the values
        of the record of bag ``other`` with its key (Nones when it has none); for bags whose keys are unique. Read
        as it goes."""
        self._ready(name)
        self._ready(other)
        mine, theirs = self._cols(name).replace(", v", ", b.v"), self._cols(other).replace(", v", ", o.v")
        for row in self._db.execute(f"SELECT b.key{mine}{theirs} FROM {name} b LEFT JOIN {other} o ON o.key = b.key "
                                    "ORDER BY b.key"):
            yield row  # (not ``yield from``: a reader that stops early must not close the cursor after the spool)

    def first_missing(self, name: str, other: str, *, by_key: bool = False) -> tuple | None:
        """(key, seq, values…) of the first record (in the order added, or with ``by_key`` the lowest key) of bag
        ``name`` whose key bag ``other`` lacks, or None."""
        self._ready(name)
        self._ready(other)
        order = "key, seq" if by_key else "seq"
        return self._db.execute(f"SELECT key, seq{self._cols(name)} FROM {name} b WHERE NOT EXISTS "
                                f"(SELECT 1 FROM {other} o WHERE o.key = b.key) ORDER BY {order} LIMIT 1").fetchone()

    def first_repeat(self, name: str) -> tuple[tuple, tuple] | None:
        """The first record of bag ``name`` whose key an earlier record has, and the first record with that key:
        ((key, seq, values…), (key, seq, values…)), or None."""
        self._ready(name)
        cols = self._cols(name)
        later = self._db.execute(f"SELECT key, seq{cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY "
                                 f"seq) AS nth FROM {name}) WHERE nth = 2 ORDER BY seq LIMIT 1").fetchone()
        if later is None:
            return None
        first = self._db.execute(f"SELECT key, seq{cols} FROM {name} WHERE key = ? ORDER BY seq LIMIT 1",
                                 (later[0],)).fetchone()
        return later, first

    def close(self) -> None:
        """Delete the spool."""
        self._db.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
