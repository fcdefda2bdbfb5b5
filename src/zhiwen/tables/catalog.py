"""A knowledge base's tables in SQLite, in the KB's folder, kept in step with its documents.

Why SQLite rather than DuckDB: it is in the standard library; the server and ``zhiwen index``
may open one KB at once (WAL readers beside one writer; DuckDB lets one process hold a file);
its authorizer and progress handler give an engine-level read-only guard and a hard deadline
under the parser's checks; it has no functions that read files or the network to switch off;
and a question's aggregate over ≤ 200,000 rows takes milliseconds either way.

The catalogue is derived from the store, so it is the same on every backend: each row chunk
carries its table's id, content hash, header paths, types and cells (:mod:`zhiwen.ingest.model`).
When the KB's revision changes, :meth:`TableCatalog.sync` drops the tables of documents that
are gone or changed and reads the others' row chunks back into one SQL table each
(``t_<hash>``, a ``_row`` column plus one typed column per header path).

Example::

    >>> catalog = TableCatalog.for_kb(kb)
    >>> catalog.sync(kb)
    >>> [t.title for t in catalog.tables()]
    ['2021年甘肃省录取分数线', …]
    >>> catalog.query('SELECT COUNT(*) FROM "t_0a1b…"', limit=200, timeout_ms=2000).rows
    [(31,)]
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zhiwen.documents import Chunk, Document, chunk_id
from zhiwen.tables.model import typed_value
from zhiwen.versions import check_sqlite

log = logging.getLogger(__name__)

FILE_NAME = "tables.sqlite3"
_SQL_TYPES = {"int": "INTEGER", "float": "REAL", "date": "TEXT", "text": "TEXT"}
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
_BATCH = 2000


class ChunkSource(Protocol):
    """What the catalogue reads of a KB's store (every backend's :class:`~zhiwen.store.Store`)."""

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...

    def get_parents(self, ids: Sequence[str]) -> list[Document]: ...

    def doc_ids(self) -> set[str]: ...


class TableKB(Protocol):
    """What the tables need of a knowledge base (:class:`~zhiwen.kb.KnowledgeBase` has it)."""

    name: str
    path: Path

    @property
    def revision(self) -> int: ...

    @property
    def store(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class TableInfo:
    """One table of the catalogue: its SQL name and what a question or a prompt says of it."""

    name: str  # the SQL table, t_<hash>
    table_id: str  # <doc id>#t<n>
    doc_id: str
    title: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    key_column: str
    rows: int
    source: str = ""
    page: int | None = None
    sheet: str = ""

    def numeric(self) -> list[str]:
        return [c for c, t in zip(self.columns, self.types, strict=True) if t in ("int", "float")]


@dataclass(slots=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    seconds: float = 0.0


class QueryFailed(Exception):
    """The engine refused or stopped a query; ``reason`` says why in Chinese."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sql_name(table_hash: str) -> str:
    return f"t_{table_hash}"


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


@dataclass(slots=True)
class _Loading:
    """One table's rows as its chunks give them back (rows by number, cells by column)."""

    meta: dict[str, Any]
    columns: dict[int, str] = field(default_factory=dict)
    types: dict[int, str] = field(default_factory=dict)
    rows: dict[int, dict[int, str]] = field(default_factory=dict)

    def add(self, meta: dict[str, Any]) -> None:
        cols = [int(i) for i in meta.get("col_index") or range(len(meta.get("columns") or []))]
        for i, name, kind in zip(cols, meta.get("columns") or [], meta.get("types") or [], strict=False):
            self.columns[i] = str(name)
            self.types[i] = str(kind)
        first = int(meta.get("row") or 1)
        for n, cells in enumerate(meta.get("cells") or []):
            row = self.rows.setdefault(first + n, {})
            for i, value in zip(cols, cells, strict=False):
                row[i] = str(value)


class TableCatalog:
    """The SQLite file of one KB's tables (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(path, threading.Lock())

    @classmethod
    def for_kb(cls, kb: TableKB) -> TableCatalog:
        return cls(Path(kb.path) / FILE_NAME)

    # -- writing -------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        check_sqlite(conn, "table-catalog", self.path)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS catalog (name TEXT PRIMARY KEY, table_id TEXT, doc_id TEXT,"
            " title TEXT, columns TEXT, types TEXT, key_column TEXT, rows INTEGER, source TEXT,"
            " page INTEGER, sheet TEXT)"
        )
        conn.execute("CREATE TABLE IF NOT EXISTS docs (doc_id TEXT PRIMARY KEY, stamp TEXT)")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        return conn

    def revision(self) -> int | None:
        if not self.path.exists():
            return None
        with self._lock, _closing(self._connect()) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key='revision'").fetchone()
        return int(row[0]) if row else None

    def sync(self, kb: TableKB) -> bool:
        """Bring the catalogue to the KB's revision; True when anything was read or dropped."""
        revision = kb.revision
        if self.revision() == revision:
            return False
        with self._lock, _closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT value FROM meta WHERE key='revision'").fetchone()
                changed = False if row and int(row[0]) == revision else self._sync(conn, kb.store)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('revision', ?)", (str(revision),))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return changed

    def _sync(self, conn: sqlite3.Connection, store: ChunkSource) -> bool:
        known = dict(conn.execute("SELECT doc_id, stamp FROM docs").fetchall())
        live = store.doc_ids()
        gone = [d for d in known if d not in live]
        changed = bool(gone)
        for doc_id in gone:
            self._drop_doc(conn, doc_id)
        todo = sorted(live)
        for start in range(0, len(todo), 500):
            for doc in store.get_parents(todo[start : start + 500]):
                stamp = _stamp(doc)
                if known.get(doc.id) == stamp:
                    continue
                changed = True
                self._drop_doc(conn, doc.id)
                if doc.metadata.get("tables"):
                    self._load_doc(conn, store, doc)
                conn.execute("INSERT OR REPLACE INTO docs VALUES (?, ?)", (doc.id, stamp))
        return changed

    def _drop_doc(self, conn: sqlite3.Connection, doc_id: str) -> None:
        for (name,) in conn.execute("SELECT name FROM catalog WHERE doc_id=?", (doc_id,)).fetchall():
            conn.execute(f"DROP TABLE IF EXISTS {quote(name)}")
        conn.execute("DELETE FROM catalog WHERE doc_id=?", (doc_id,))
        conn.execute("DELETE FROM docs WHERE doc_id=?", (doc_id,))

    def _load_doc(self, conn: sqlite3.Connection, store: ChunkSource, doc: Document) -> None:
        count = int(doc.metadata.get("chunks") or 0)
        ids = [chunk_id(doc.id, i) for i in range(count)]
        loading: dict[str, _Loading] = {}
        for start in range(0, len(ids), _BATCH):
            for chunk in store.get_chunks(ids[start : start + _BATCH]):
                meta = chunk.metadata
                if "table" not in meta or "cells" not in meta:
                    continue
                loading.setdefault(str(meta["table_hash"]), _Loading(meta)).add(meta)
        for table_hash, table in loading.items():
            self._create(conn, table_hash, table, doc)

    def _create(self, conn: sqlite3.Connection, table_hash: str, table: _Loading, doc: Document) -> None:
        name = sql_name(table_hash)
        order = sorted(table.columns)
        columns = [table.columns[i] for i in order]
        types = [table.types.get(i, "text") for i in order]
        defs = ", ".join(
            f"{quote(c)} {_SQL_TYPES.get(t, 'TEXT')}" for c, t in zip(columns, types, strict=True)
        )
        conn.execute(f"DROP TABLE IF EXISTS {quote(name)}")
        conn.execute(f"CREATE TABLE {quote(name)} (_row INTEGER PRIMARY KEY, {defs})")
        marks = ", ".join("?" * (len(columns) + 1))
        conn.executemany(
            f"INSERT INTO {quote(name)} VALUES ({marks})",
            (
                [n, *(typed_value(cells.get(i, ""), t) for i, t in zip(order, types, strict=True))]
                for n, cells in sorted(table.rows.items())
            ),
        )
        meta = table.meta
        conn.execute(
            "INSERT OR REPLACE INTO catalog VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                str(meta.get("table")),
                doc.id,
                str(meta.get("table_title") or doc.title),
                json.dumps(columns, ensure_ascii=False),
                json.dumps(types),
                str(meta.get("key_column") or columns[0]),
                len(table.rows),
                str(meta.get("source") or doc.metadata.get("source") or ""),
                meta.get("page"),
                str(meta.get("sheet") or ""),
            ),
        )

    # -- reading -------------------------------------------------------------------------------
    def tables(self, names: Iterable[str] | None = None) -> list[TableInfo]:
        """The catalogue's tables (those named, in that order, when ``names`` is given)."""
        if not self.path.exists():
            return []
        with self._lock, _closing(self._connect()) as conn:
            rows = conn.execute("SELECT * FROM catalog").fetchall()
        found = {r[0]: _info(r) for r in rows}
        if names is None:
            return sorted(found.values(), key=lambda t: (t.doc_id, t.table_id))
        return [found[n] for n in names if n in found]

    def distinct_values(self, table: TableInfo, column: str, limit: int = 300) -> list[str]:
        """The distinct texts of one column (none when it has more than ``limit``)."""
        result = self.query(
            f"SELECT DISTINCT {quote(column)} FROM {quote(table.name)} LIMIT {limit + 1}",
            limit=limit + 1,
            timeout_ms=1000,
            allowed={table.name},
        )
        if len(result.rows) > limit:
            return []
        return [str(r[0]) for r in result.rows if r[0] not in (None, "")]

    def query(self, sql: str, *, limit: int, timeout_ms: int, allowed: set[str] | None = None) -> QueryResult:
        """Run one checked SELECT read-only: at most ``limit`` rows, stopped at ``timeout_ms``;
        the engine refuses any write and any table but ``allowed`` (and the catalogue)."""
        if not self.path.exists():
            raise QueryFailed("知识库还没有表格数据")
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
        try:
            conn.set_authorizer(_authorizer(allowed))
            deadline = time.monotonic() + timeout_ms / 1000
            conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 2000)
            start = time.perf_counter()
            try:
                cursor = conn.execute(sql)
                rows = cursor.fetchmany(limit + 1)
            except sqlite3.OperationalError as exc:
                if "interrupted" in str(exc):
                    raise QueryFailed(f"查询超时（超过 {timeout_ms} 毫秒）") from exc
                raise QueryFailed(f"查询无法执行：{exc}") from exc
            except sqlite3.DatabaseError as exc:
                raise QueryFailed(f"查询被拒绝：{exc}") from exc
            columns = [d[0] for d in cursor.description or []]
            return QueryResult(columns, rows[:limit], len(rows) > limit, time.perf_counter() - start)
        finally:
            conn.close()


def _authorizer(allowed: set[str] | None) -> Any:
    read_ok = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}

    def check(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        if action in read_ok:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            if allowed is None or arg1 in allowed or arg1 == "catalog":
                return sqlite3.SQLITE_OK
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    return check


def _info(row: tuple[Any, ...]) -> TableInfo:
    name, table_id, doc_id, title, columns, types, key, rows, source, page, sheet = row
    return TableInfo(
        name=name,
        table_id=table_id,
        doc_id=doc_id,
        title=title,
        columns=tuple(json.loads(columns)),
        types=tuple(json.loads(types)),
        key_column=key,
        rows=int(rows),
        source=source or "",
        page=page,
        sheet=sheet or "",
    )


def _stamp(doc: Document) -> str:
    """What changes when a document is imported again with other content."""
    meta = doc.metadata
    return json.dumps([meta.get("file_sha256"), meta.get("chunks"), meta.get("tables"), len(doc.text)])


class _closing:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()
