"""Versions of every persistent format of zhiwen, and the migrations between them.

One registry (:mod:`zhiwen.versions.registry`) says, per format, its current version and the
steps that bring an older file there; each format's opener asks it once:

* SQLite files keep their version in ``PRAGMA user_version``: :func:`check_sqlite` runs before
  the opener's ``CREATE TABLE IF NOT EXISTS`` (:mod:`zhiwen.versions.sqlite`);
* JSON files (``kb.json``, the home's ``dynamic_settings.json``) keep it in a ``format_version``
  key: :func:`check_document` (:mod:`zhiwen.versions.documents`);
* PostgreSQL schemas and Qdrant collections keep their own (``schema_version`` in their meta)
  and read the current one from the registry.

An older file is migrated on open — after a backup copy, one transaction (or write-new-then-
rename) per step, so a crash leaves it at a version it can resume from — unless a step is too
big to run on open (``on_open=False``): then the opener refuses with a message naming
``zhiwen migrate``, which runs every step of a home with progress (:mod:`zhiwen.versions.home`).
A file of a newer version is refused and never touched.

Example::

    >>> conn = sqlite3.connect(path)
    >>> check_sqlite(conn, "sessions", path)   # fresh: stamped; older: migrated; newer: refused
"""

from __future__ import annotations

from zhiwen.versions.documents import check_document, document_version
from zhiwen.versions.errors import FormatTooNew, MigrationNeeded
from zhiwen.versions.registry import FORMATS, Format, Step, current, get_format
from zhiwen.versions.sqlite import check_sqlite, sqlite_version

__all__ = [
    "FORMATS",
    "Format",
    "FormatTooNew",
    "MigrationNeeded",
    "Step",
    "check_document",
    "check_sqlite",
    "current",
    "document_version",
    "get_format",
    "sqlite_version",
]
