"""SQLite files: the version in ``PRAGMA user_version``, each step one ``BEGIN IMMEDIATE``.

Before the first step the file is copied with SQLite's online backup API to
``<file>.v<found>.bak`` (kept when it exists: the copy of an interrupted migration is the
untouched original). Each step commits with its version, so a crash between steps resumes from
the last one; two processes opening the file at once serialise on the write lock and the second
finds the work done. A file over :data:`ON_OPEN_MAX_BYTES` is not migrated on open (the copy
alone would stall the opener): it is refused with a message naming ``zhiwen migrate``.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from zhiwen.versions.errors import MigrationNeeded
from zhiwen.versions.registry import Format, Step, get_format

log = logging.getLogger(__name__)

#: a bigger file is not copied and migrated while it is being opened (a server would stall on
#: it, the disk may lack room for the copy): the opener names ``zhiwen migrate`` instead
ON_OPEN_MAX_BYTES = 1 << 30


def sqlite_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _fresh(conn: sqlite3.Connection) -> bool:
    """No table yet: a file this opener is creating."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").fetchone() is None


def check_sqlite(conn: sqlite3.Connection, name: str, path: Path, *, on_open: bool = True) -> list[Step]:
    """Bring the file behind ``conn`` to the current version of format ``name`` (see module
    docstring); a fresh file is stamped. Returns the steps run. Call it before the opener's own
    ``CREATE TABLE IF NOT EXISTS`` (the steps see the old layout)."""
    fmt = get_format(name)
    found = sqlite_version(conn)
    if found == fmt.current:
        return []
    if found == 0 and _fresh(conn):
        conn.execute(f"PRAGMA user_version = {fmt.current}")
        return []
    steps = fmt.pending(found, path, on_open=on_open)
    if on_open and _size(path) > ON_OPEN_MAX_BYTES:
        raise MigrationNeeded(fmt.label, path, found, fmt.current)
    backup_sqlite(conn, path, found)
    for step in steps:
        _run_step(conn, fmt, step, path)
    return steps


def _size(path: Path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def backup_sqlite(conn: sqlite3.Connection, path: Path, found: int) -> Path:
    target = Path(f"{path}.v{found}.bak")
    if not target.exists():
        partial = target.with_name(target.name + ".part")
        with sqlite3.connect(partial) as copy:
            conn.backup(copy)
        copy.close()
        partial.replace(target)
        log.warning("backed %s up to %s before migrating it", path, target)
    return target


def _run_step(conn: sqlite3.Connection, fmt: Format, step: Step, path: Path) -> None:
    fn = step.function()
    conn.execute("BEGIN IMMEDIATE")
    try:
        if sqlite_version(conn) < step.to:  # another process may have done it meanwhile
            if fn is not None:
                fn(conn)
            conn.execute(f"PRAGMA user_version = {step.to}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    log.warning("migrated %s (%s) to version %d: %s", path, fmt.name, step.to, step.what)
