"""Every versioned file of a home, and `zhiwen migrate`'s pass over them.

The home's files (``sessions.sqlite``, ``questions.sqlite``, ``jobs.sqlite3``,
``dynamic_settings.json``) and each KB's (``kb.json``, ``store/store.sqlite``,
``curation.sqlite``, ``tables.sqlite3``) are found by name; a KB in PostgreSQL or Qdrant is
migrated by opening it (its store's opener runs the steps, see :mod:`zhiwen.versions.registry`).

Example::

    for item in survey(home):
        print(item.format, item.path, item.found, "→", item.target)
    migrate_home(home, on_item=print)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zhiwen.errors import ZhiwenError
from zhiwen.versions.documents import check_document, document_version
from zhiwen.versions.registry import get_format
from zhiwen.versions.sqlite import check_sqlite, sqlite_version

HOME_FILES = {
    "sessions.sqlite": "sessions",
    "questions.sqlite": "question-log",
    "jobs.sqlite3": "upload-jobs",
    "dynamic_settings.json": "home-settings",
}
KB_FILES = {
    "kb.json": "kb-config",
    "store/store.sqlite": "embedded-store",
    "curation.sqlite": "curation",
    "tables.sqlite3": "table-catalog",
    "sync.json": "sync-state",
    "documents.json": "upload-ledger",
}


@dataclass(slots=True)
class Item:
    """One versioned file: where it stands and what migrating it does."""

    format: str
    path: Path
    found: int
    target: int
    steps: list[str] = field(default_factory=list)
    error: str | None = None  # a newer file, an unreadable one, a failed step
    done: bool = False

    @property
    def pending(self) -> bool:
        return self.error is None and self.found < self.target


def _paths(home: Path) -> list[tuple[str, Path]]:
    out = [(fmt, home / name) for name, fmt in HOME_FILES.items()]
    kbs = home / "kbs"
    if kbs.is_dir():
        for kb in sorted(p for p in kbs.iterdir() if (p / "kb.json").is_file()):
            out.extend((fmt, kb / name) for name, fmt in KB_FILES.items())
    return [(fmt, path) for fmt, path in out if path.is_file()]


def _version(fmt: str, path: Path) -> int:
    if get_format(fmt).kind == "json":
        data = json.loads(path.read_text("utf-8"))
        return document_version(data) if isinstance(data, dict) else 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sqlite_version(conn)
    finally:
        conn.close()


def survey(home: Path) -> list[Item]:
    """Every versioned file of ``home`` with its version and the steps it lacks (nothing written)."""
    items: list[Item] = []
    for fmt_name, path in _paths(home):
        fmt = get_format(fmt_name)
        item = Item(fmt_name, path, 0, fmt.current)
        try:
            item.found = _version(fmt_name, path)
            item.steps = [s.what for s in fmt.pending(item.found, path, on_open=False)]
        except ZhiwenError as exc:
            item.error = exc.message
        except (OSError, ValueError, sqlite3.Error) as exc:
            item.error = f"无法读取：{exc}"
        items.append(item)
    return items


def migrate_item(item: Item) -> None:
    """Run the steps ``item`` lacks (a backup copy first); a failure is kept in ``item.error``."""
    if not item.pending:
        return
    try:
        if get_format(item.format).kind == "json":
            data = json.loads(item.path.read_text("utf-8"))
            check_document(data, item.format, item.path, on_open=False)
        else:
            conn = sqlite3.connect(item.path, isolation_level=None, timeout=30)
            try:
                check_sqlite(conn, item.format, item.path, on_open=False)
            finally:
                conn.close()
        item.done = True
    except ZhiwenError as exc:
        item.error = exc.message
    except (OSError, ValueError, sqlite3.Error) as exc:
        item.error = f"升级失败：{exc}"


def migrate_home(home: Path, on_item: Callable[[Item], None] | None = None) -> list[Item]:
    """Every file of ``home`` brought to the current versions; ``on_item`` after each."""
    items = survey(home)
    for item in items:
        migrate_item(item)
        if on_item is not None:
            on_item(item)
    return items
