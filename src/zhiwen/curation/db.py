"""The curation store of one knowledge base: ``<kb dir>/curation.sqlite``, for every backend.

The KB's folder exists for every store backend (its ``kb.json`` lives there), so overlays,
the change log, the dictionary, the synonym groups and hit counts live next to it whether the
chunks are in the embedded store, PostgreSQL or Qdrant. The file is made by the first change:
a KB nobody curated has none, and opening one costs nothing.

=================  ==========================================================================
``overlays``       one row per curated chunk: its :class:`~zhiwen.curation.model.Overlay` as
                   JSON, with ``doc_id``, ``origin``, ``keywords``, ``n_questions`` as columns
                   for the queries below, and the vector a disabled chunk had (re-enabling it
                   needs no model call)
``changes``        the change log: when, who (the caller's key fingerprint), action, target,
                   before and after (JSON), and whether it was undone
``words``          dictionary words; ``synonym_groups``: one JSON list per group
``hits``           how often each chunk was returned by a search (flushed in batches)
``parents``        a curated document's parent as imported (the store holds it as curated:
                   disabled paragraphs out, edited ones in their new words)
``meta``           schema version, and ``tokens_pending``: a dictionary change whose re-tokenising
                   has not finished (resumed by the next open)
=================  ==========================================================================

Example::

    db = CurationDB(kb_dir)
    with db.transaction() as tx:
        tx.put_overlay(overlay, vector=None)
        tx.log("disable", "ab12cd", "manual#0", before, after)
    db.overlays_of_doc("manual")
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.curation.model import Change, Overlay
from zhiwen.documents import Document
from zhiwen.errors import StoreUnavailable
from zhiwen.versions import check_sqlite, current

DB_NAME = "curation.sqlite"
SCHEMA_VERSION = current("curation")  # PRAGMA user_version, checked by zhiwen.versions
_BATCH = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS overlays (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    keywords TEXT NOT NULL DEFAULT '[]',
    n_questions INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    vector BLOB,
    vector_hash TEXT,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS overlays_doc ON overlays (doc_id);
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before TEXT,
    after TEXT,
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS words (word TEXT PRIMARY KEY, pos INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS synonym_groups (id INTEGER PRIMARY KEY, terms TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hits (chunk_id TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS parents (doc_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
"""


def _marks(n: int) -> str:
    return ",".join("?" * n)


class Tx:
    """The writes of one curation transaction (see :meth:`CurationDB.transaction`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def put_overlay(self, overlay: Overlay, *, vector: tuple[str, np.ndarray] | None = None) -> None:
        """Store ``overlay`` (a plain one is removed: nothing left to say); ``vector`` =
        (content hash, vector) kept for a disabled chunk."""
        if overlay.plain:
            self.drop_overlays([overlay.chunk_id])
            return
        # a chunk that stays out of search keeps the vector it left with
        keep = vector is None and not overlay.rows()
        self.conn.execute(
            "INSERT INTO overlays (chunk_id, doc_id, origin, keywords, n_questions, state, vector,"
            " vector_hash, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET"
            " doc_id = excluded.doc_id, origin = excluded.origin, keywords = excluded.keywords,"
            " n_questions = excluded.n_questions, state = excluded.state, updated = excluded.updated,"
            " vector = CASE WHEN ? THEN overlays.vector ELSE excluded.vector END,"
            " vector_hash = CASE WHEN ? THEN overlays.vector_hash ELSE excluded.vector_hash END",
            (
                overlay.chunk_id,
                overlay.doc_id,
                overlay.origin,
                json.dumps(list(overlay.keywords), ensure_ascii=False),
                len(overlay.questions),
                overlay.dumps(),
                None if vector is None else np.asarray(vector[1], np.float32).tobytes(),
                None if vector is None else vector[0],
                time.time(),
                keep,
                keep,
            ),
        )

    def drop_overlays(self, chunk_ids: Sequence[str]) -> None:
        for i in range(0, len(chunk_ids), _BATCH):
            part = list(chunk_ids[i : i + _BATCH])
            self.conn.execute(f"DELETE FROM overlays WHERE chunk_id IN ({_marks(len(part))})", part)

    def drop_documents(self, doc_ids: Sequence[str]) -> None:
        for i in range(0, len(doc_ids), _BATCH):
            part = list(doc_ids[i : i + _BATCH])
            self.conn.execute(f"DELETE FROM overlays WHERE doc_id IN ({_marks(len(part))})", part)
            self.conn.execute(f"DELETE FROM parents WHERE doc_id IN ({_marks(len(part))})", part)

    def put_parents(self, docs: Sequence[Document]) -> None:
        """Keep these parents as imported (the store gets them curated)."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO parents (doc_id, doc) VALUES (?, ?)",
            [(d.id, json.dumps(dataclasses.asdict(d), ensure_ascii=False)) for d in docs],
        )

    def log(self, action: str, actor: str, target: str, before: Any, after: Any) -> int:
        cur = self.conn.execute(
            "INSERT INTO changes (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                actor,
                action,
                target,
                json.dumps(before, ensure_ascii=False),
                json.dumps(after, ensure_ascii=False),
            ),
        )
        return int(cur.lastrowid or 0)

    def mark_undone(self, change_id: int) -> None:
        self.conn.execute("UPDATE changes SET undone = 1 WHERE id = ?", (change_id,))

    def set_words(self, words: Sequence[str]) -> None:
        self.conn.execute("DELETE FROM words")
        self.conn.executemany(
            "INSERT INTO words (word, pos) VALUES (?, ?)", [(w, i) for i, w in enumerate(words)]
        )

    def set_groups(self, groups: Sequence[Sequence[str]]) -> None:
        self.conn.execute("DELETE FROM synonym_groups")
        self.conn.executemany(
            "INSERT INTO synonym_groups (id, terms) VALUES (?, ?)",
            [(i, json.dumps(list(g), ensure_ascii=False)) for i, g in enumerate(groups)],
        )

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


class CurationDB:
    """``curation.sqlite`` of one KB (see the module docstring); thread-safe, made on first write."""

    def __init__(self, kb_dir: Path) -> None:
        self.path = Path(kb_dir) / DB_NAME
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    # -- connection -------------------------------------------------------------------------
    def exists(self) -> bool:
        return self._conn is not None or self.path.is_file()

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        """The connection; None when there is no file yet and ``create`` is false."""
        with self._lock:
            if self._closed:
                raise StoreUnavailable("curation store closed", message="知识库的整理数据已关闭")
            if self._conn is None:
                if not create and not self.path.is_file():
                    return None
                conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                check_sqlite(conn, "curation", self.path)
                conn.executescript(_SCHEMA)
                self._conn = conn
            return self._conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One ``BEGIN IMMEDIATE`` … ``COMMIT`` (any error rolls it back); makes the file."""
        with self._lock:
            conn = self._connect(create=True)
            assert conn is not None
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _read(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            conn = self._connect(create=False)
            return [] if conn is None else conn.execute(query, tuple(params)).fetchall()

    def _read_in(self, query: str, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """``query`` with its ``IN ({})`` filled by ``keys``, in batches under SQLite's limit."""
        out: list[tuple[Any, ...]] = []
        ids = list(dict.fromkeys(keys))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            out.extend(self._read(query.format(_marks(len(part))), part))
        return out

    # -- overlays ---------------------------------------------------------------------------
    def overlays(self, chunk_ids: Sequence[str]) -> dict[str, Overlay]:
        rows = self._read_in("SELECT chunk_id, state FROM overlays WHERE chunk_id IN ({})", chunk_ids)
        return {cid: Overlay.from_json(json.loads(state)) for cid, state in rows}

    def overlays_of_docs(self, doc_ids: Sequence[str]) -> dict[str, Overlay]:
        rows = self._read_in("SELECT chunk_id, state FROM overlays WHERE doc_id IN ({})", doc_ids)
        return {cid: Overlay.from_json(json.loads(state)) for cid, state in rows}

    def overlays_of_origin(self, origin: str) -> list[Overlay]:
        rows = self._read("SELECT state FROM overlays WHERE origin = ? ORDER BY doc_id, chunk_id", (origin,))
        return [Overlay.from_json(json.loads(r[0])) for r in rows]

    def disabled_matching(self, needle: str, limit: int) -> list[Overlay]:
        """Disabled chunks whose text (or a question) contains ``needle`` (case-insensitive)."""
        rows = self._read(
            "SELECT state FROM overlays WHERE json_extract(state, '$.enabled') = 0"
            " AND instr(lower(state), ?) > 0 LIMIT ?",
            (needle.lower(), limit),
        )
        return [Overlay.from_json(json.loads(r[0])) for r in rows]

    def kept_vectors(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, np.ndarray]]:
        """chunk id → (content hash, vector) kept when the chunk was disabled."""
        rows = self._read_in(
            "SELECT chunk_id, vector, vector_hash FROM overlays WHERE vector IS NOT NULL"
            " AND chunk_id IN ({})",
            chunk_ids,
        )
        return {cid: (h, np.frombuffer(blob, np.float32).copy()) for cid, blob, h in rows}

    def parents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        """The parents of ``doc_ids`` as imported, for the curated ones."""
        rows = self._read_in("SELECT doc_id, doc FROM parents WHERE doc_id IN ({})", doc_ids)
        return {doc_id: Document(**json.loads(doc)) for doc_id, doc in rows}

    def keywords(self) -> dict[str, tuple[str, ...]]:
        rows = self._read("SELECT chunk_id, keywords FROM overlays WHERE keywords != '[]'")
        return {cid: tuple(json.loads(kw)) for cid, kw in rows}

    def added_rows(self) -> dict[str, int]:
        """doc id → store rows (chunk + question rows) of its searchable manual and FAQ chunks."""
        rows = self._read(
            "SELECT doc_id, SUM(1 + n_questions) FROM overlays WHERE origin != 'parsed'"
            " AND json_extract(state, '$.enabled') AND NOT json_extract(state, '$.deleted') GROUP BY doc_id"
        )
        return {doc_id: int(n) for doc_id, n in rows}

    def has_questions(self) -> bool:
        return bool(self._read("SELECT 1 FROM overlays WHERE n_questions > 0 LIMIT 1"))

    def protected_docs(self, doc_ids: Sequence[str]) -> set[str]:
        """Those of ``doc_ids`` that hold chunks added by hand or as FAQ entries."""
        query = "SELECT DISTINCT doc_id FROM overlays WHERE origin != 'parsed' AND doc_id IN ({})"
        return {r[0] for r in self._read_in(query, doc_ids)}

    # -- log --------------------------------------------------------------------------------
    def changes(self, *, limit: int = 50, target: str | None = None) -> list[Change]:
        where, params = ("WHERE target = ?", [target]) if target else ("", [])
        rows = self._read(
            f"SELECT id, at, actor, action, target, before, after, undone FROM changes {where}"
            " ORDER BY id DESC LIMIT ?",
            [*params, limit],
        )
        return [_change(r) for r in rows]

    def change(self, change_id: int | None) -> Change | None:
        """Change ``change_id``, or (None) the latest one not undone and not itself an undo."""
        if change_id is None:
            rows = self._read(
                "SELECT id, at, actor, action, target, before, after, undone FROM changes"
                " WHERE undone = 0 AND action != 'undo' ORDER BY id DESC LIMIT 1"
            )
        else:
            rows = self._read(
                "SELECT id, at, actor, action, target, before, after, undone FROM changes WHERE id = ?",
                (change_id,),
            )
        return _change(rows[0]) if rows else None

    # -- words, synonyms, meta, hits ------------------------------------------------------------
    def words(self) -> tuple[str, ...]:
        return tuple(r[0] for r in self._read("SELECT word FROM words ORDER BY pos"))

    def groups(self) -> tuple[tuple[str, ...], ...]:
        return tuple(
            tuple(json.loads(r[0])) for r in self._read("SELECT terms FROM synonym_groups ORDER BY id")
        )

    def meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def hits(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        return {
            cid: int(n)
            for cid, n in self._read_in("SELECT chunk_id, n FROM hits WHERE chunk_id IN ({})", chunk_ids)
        }

    def add_hits(self, counts: Mapping[str, int]) -> None:
        """Add to the hit counts (only when the file exists: searching never creates it)."""
        with self._lock:
            conn = self._connect(create=False)
            if conn is None or not counts:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT INTO hits (chunk_id, n) VALUES (?, ?)"
                    " ON CONFLICT(chunk_id) DO UPDATE SET n = n + excluded.n",
                    list(counts.items()),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None


def _change(row: tuple[Any, ...]) -> Change:
    cid, at, actor, action, target, before, after, undone = row
    return Change(
        id=int(cid),
        at=float(at),
        actor=actor,
        action=action,
        target=target,
        before=json.loads(before) if before else None,
        after=json.loads(after) if after else None,
        undone=bool(undone),
    )
