"""SQLite tables as JSON lines and back: how a bundle carries a KB's ``curation.sqlite``.

Rows travel as JSON objects keyed by column name (a BLOB as ``{"$b64": …}``), so a bundle
stays readable by a release whose schema added columns: a row is inserted with the columns
both sides know, the others take the target schema's defaults. The dump reads every table in
one read transaction (a consistent snapshot while the KB is being curated).

Example::

    counts = dump_tables(kb_dir / "curation.sqlite", lambda table: out.jsonl(f"curation/{table}.jsonl.gz"))
    with db.transaction() as tx:
        load_rows(tx.conn, "overlays", bundle.jsonl("curation/overlays.jsonl.gz"))
"""

from __future__ import annotations

import base64
import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from zhiwen.portable.bundle import JsonLines

_BATCH = 1000


def _encode(value: Any) -> Any:
    return {"$b64": base64.b64encode(value).decode("ascii")} if isinstance(value, bytes) else value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$b64"}:
        return base64.b64decode(value["$b64"])
    return value


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_names(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [r[0] for r in rows]


MemberOpener = Callable[[str], AbstractContextManager[JsonLines]]


def dump_tables(path: Path, open_member: MemberOpener) -> dict[str, int]:
    """Every table of the database at ``path`` into the member ``open_member(table)`` gives;
    returns the rows per table."""
    counts: dict[str, int] = {}
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN")  # one snapshot for every table
        for table in table_names(conn):
            cur = conn.execute(f"SELECT * FROM {quote(table)}")
            columns = [d[0] for d in cur.description]
            with open_member(table) as lines:
                for row in cur:
                    lines.write({c: _encode(v) for c, v in zip(columns, row, strict=True)})
                counts[table] = lines.count
        conn.execute("COMMIT")
    finally:
        conn.close()
    return counts


def load_rows(
    conn: sqlite3.Connection,
    table: str,
    rows: Iterable[dict[str, Any]],
    *,
    skip: Callable[[dict[str, Any]], bool] | None = None,
) -> int:
    """Insert (or replace) ``rows`` into ``table`` with the columns the table has; returns the
    rows written. Call it inside the caller's transaction."""
    known = [r[1] for r in conn.execute(f"PRAGMA table_info({quote(table)})")]
    if not known:
        return 0
    n = 0
    for batch in _batches(r for r in rows if skip is None or not skip(r)):
        columns = [c for c in known if c in batch[0]]
        marks = ",".join("?" * len(columns))
        conn.executemany(
            f"INSERT OR REPLACE INTO {quote(table)} ({','.join(map(quote, columns))}) VALUES ({marks})",
            [tuple(_decode(r.get(c)) for c in columns) for r in batch],
        )
        n += len(batch)
    return n


def _batches(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


@contextlib.contextmanager
def online_copy(source: Path, target: Path) -> Iterator[Path]:
    """A consistent copy of a live SQLite database (the online backup API), removed on exit."""
    backup_database(source, target)
    try:
        yield target
    finally:
        target.unlink(missing_ok=True)


def backup_database(source: Path, target: Path) -> None:
    """Copy the live database ``source`` to ``target`` with SQLite's online backup API: a
    consistent snapshot. In one step: under WAL (every zhiwen database) that is one read
    transaction, which writers never wait for; a copy in several steps would restart each time
    another connection writes."""
    src = sqlite3.connect(source, timeout=30)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst, pages=-1)
        finally:
            dst.close()
    finally:
        src.close()
