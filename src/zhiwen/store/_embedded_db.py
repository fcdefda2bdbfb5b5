"""The SQLite source of truth of the embedded store: schema, connections, reads and atomic writes.

One file ``store.sqlite`` (WAL) per store holds chunks (text, metadata JSON, token ids and
counts, vector bytes, a content hash), parent documents, the token vocabulary and a ``meta``
table (store uuid, vector dimension, write generation). Every write is one ``BEGIN IMMEDIATE``
transaction that bumps the generation, so readers — the in-memory index of this or another
process — notice any change with one indexed read.

Row ids are ``AUTOINCREMENT``: never reused, and a changed chunk is written as a new row, so
the set of live row ids plus the vector fill stamps describe the state (the index syncs by row
id, see :mod:`zhiwen.store._embedded_index`). Re-upserting a chunk with the same content (hash
of text, metadata and tokens) keeps its row; a new vector for it is written in place. Vectors
may come later (:meth:`ChunkDB.set_vectors`): each filled row is stamped (``vseq``) with the
generation of its write, and a partial index over rows without a vector serves
``missing_vector_ids``. The writes live in :mod:`zhiwen.store._embedded_write`; disk faults in
a write become a clear error (:mod:`zhiwen.store._disk`).

Example::

    db = ChunkDB(Path("kbs/manual/store"), dim=384)
    db.upsert(chunks, tokens=token_lists, vectors=vecs, parents=docs)
    with db.consistent_read() as conn:
        rows = db.rows_after(conn, 0)
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._disk import store_open_error
from zhiwen.store._embedded_write import ChunkWrites, _batches, _marks
from zhiwen.versions import check_sqlite

DB_NAME = "store.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    text TEXT NOT NULL,
    title TEXT NOT NULL,
    parent_id TEXT,
    metadata TEXT NOT NULL,
    terms BLOB NOT NULL,
    tfs BLOB NOT NULL,
    length INTEGER NOT NULL,
    vector BLOB,
    hash TEXT NOT NULL,
    vseq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE TABLE IF NOT EXISTS parents (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
"""
# after the column exists (stores created before vector fills lack it until first opened)
_INDEXES = """
CREATE INDEX IF NOT EXISTS chunks_vseq ON chunks (vseq);
CREATE INDEX IF NOT EXISTS chunks_novec ON chunks (rowid) WHERE vector IS NULL;
"""



def add_vector_stamps(conn: sqlite3.Connection) -> None:
    """Migration to version 1: a store from before vector fills lacks the ``vseq`` column."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
    if columns and "vseq" not in columns:
        conn.execute("ALTER TABLE chunks ADD COLUMN vseq INTEGER NOT NULL DEFAULT 0")


# What the index reads per chunk: (rowid, id, metadata JSON, term ids, tfs, length, vector)
IndexRow = tuple[int, str, str, bytes, bytes, int, bytes | None]


class ChunkDB(ChunkWrites):
    """The SQLite database of one embedded store (see module docstring); thread-safe."""

    def __init__(self, path: Path, *, dim: int | None) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()  # writes, index syncs, connection bookkeeping
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self.closed = False
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.wconn = self._connect()
            check_sqlite(self.wconn, "embedded-store", self.path / DB_NAME)
            self.wconn.executescript(_SCHEMA)
            self.wconn.executescript(_INDEXES)
        except (OSError, sqlite3.Error) as exc:
            raise store_open_error(exc, self.path) from exc
        self.uuid = self._meta_init("uuid", uuid.uuid4().hex) or ""
        self.dim = self._resolve_dim(dim)
        self.vocab: dict[str, int] = {}  # term → id, only ever grows
        self._vocab_max = 0
        self.load_vocab(self.wconn)

    # -- connections and meta ----------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path / DB_NAME, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        with self.lock:
            self._conns.append(conn)
        return conn

    def rconn(self) -> sqlite3.Connection:
        """A per-thread read connection (WAL readers never block the writer)."""
        if self.closed:
            raise StoreUnavailable("store is closed", message="知识库存储已关闭")
        # thread-local: each thread opens its own connection on first use
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _meta_init(self, key: str, value: str | None) -> str | None:
        row = self.wconn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0]) if row[0] is not None else None
        if value is not None:
            self.wconn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))
        return value

    def _resolve_dim(self, dim: int | None) -> int | None:
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0):
            raise InvalidParameter(f"dim must be a positive int, got {dim!r}", message="向量维度必须是正整数")
        row = self.wconn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        stored = int(row[0]) if row and row[0] else None
        if stored is not None and dim is not None and stored != dim:
            raise InvalidParameter(
                f"store at {self.path} has vectors of dim {stored}, not {dim}",
                message=f"知识库的向量维度为 {stored}，与当前嵌入模型的 {dim} 不一致，请重建知识库",
            )
        if stored is None and dim is not None:
            self.wconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('dim', ?)", (str(dim),))
        return stored if stored is not None else dim

    def load_vocab(self, conn: sqlite3.Connection) -> None:
        """Learn the terms added since the last call (by this or another process)."""
        for term_id, term in conn.execute("SELECT id, term FROM vocab WHERE id > ?", (self._vocab_max,)):
            self.vocab[term] = term_id
            self._vocab_max = max(self._vocab_max, term_id)

    def rows_generation(self, conn: sqlite3.Connection) -> int | None:
        """The generation of the last write that added or removed rows (not a vector fill);
        None for a store last written before this was recorded."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'rows_generation'").fetchone()
        return int(row[0]) if row else None

    def generation(self, conn: sqlite3.Connection | None = None) -> int:
        """The write counter: it changes with every committed change of the chunks."""
        conn = conn or self.rconn()
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    # -- reads ------------------------------------------------------------------------------------
    def count(self) -> int:
        return int(self.rconn().execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def doc_ids(self) -> set[str]:
        return {r[0] for r in self.rconn().execute("SELECT DISTINCT doc_id FROM chunks")}

    def counts(self) -> tuple[int, int, int]:
        """(chunks, documents, parents)."""
        conn = self.rconn()
        n_chunks = int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        n_docs = int(conn.execute("SELECT COUNT(DISTINCT doc_id) FROM chunks").fetchone()[0])
        n_parents = int(conn.execute("SELECT COUNT(*) FROM parents").fetchone()[0])
        return n_chunks, n_docs, n_parents

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        found: dict[str, Chunk] = {}
        conn = self.rconn()
        for part in _batches(list(dict.fromkeys(ids))):
            cols = "id, doc_id, text, title, parent_id, metadata"
            q = f"SELECT {cols} FROM chunks WHERE id IN ({_marks(part)})"
            for cid, doc_id, text, title, parent_id, md in conn.execute(q, tuple(part)):
                found[cid] = Chunk(cid, doc_id, text, title, parent_id, json.loads(md))
        return [found[i] for i in ids if i in found]

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        """Chunk ids of ``doc_ids`` (None: of every document), in row order."""
        conn = self.rconn()
        if doc_ids is None:
            return [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY rowid")]
        out: list[tuple[int, str]] = []
        for part in _batches(list(dict.fromkeys(doc_ids))):
            q = f"SELECT rowid, id FROM chunks WHERE doc_id IN ({_marks(part)})"
            out.extend(conn.execute(q, tuple(part)))
        return [cid for _, cid in sorted(out)]

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        found: dict[str, Document] = {}
        conn = self.rconn()
        for part in _batches(list(dict.fromkeys(ids))):
            q = f"SELECT id, text, title, metadata FROM parents WHERE id IN ({_marks(part)})"
            for pid, text, title, md in conn.execute(q, tuple(part)):
                found[pid] = Document(pid, text, title, json.loads(md))
        return [found[i] for i in ids if i in found]

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        """Ids of chunks without a vector, in insertion (row id) order; a partial index serves it."""
        q = "SELECT id FROM chunks WHERE vector IS NULL ORDER BY rowid"
        if limit is None:
            return [r[0] for r in self.rconn().execute(q)]
        return [r[0] for r in self.rconn().execute(q + " LIMIT ?", (max(0, int(limit)),))]

    def missing_vector_count(self) -> int:
        q = "SELECT COUNT(*) FROM chunks WHERE vector IS NULL"
        return int(self.rconn().execute(q).fetchone()[0])

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored (L2-normalised float32) vectors by chunk id; ids without a vector are absent."""
        found: dict[str, np.ndarray] = {}
        conn = self.rconn()
        for part in _batches(list(dict.fromkeys(ids))):
            q = f"SELECT id, vector FROM chunks WHERE vector IS NOT NULL AND id IN ({_marks(part)})"
            for cid, vec in conn.execute(q, tuple(part)):
                found[cid] = np.frombuffer(vec, np.float32).copy()
        return found

    # -- what the index reads -----------------------------------------------------------------------
    @contextlib.contextmanager
    def consistent_read(self) -> Iterator[sqlite3.Connection]:
        """The writer connection inside one read transaction (hold :attr:`lock`)."""
        conn = self.wconn
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    @staticmethod
    def rowids(conn: sqlite3.Connection) -> np.ndarray:
        """Every live row id, ascending.

        It runs on the first search after every write, so it is made cheap: SQLite scans the
        narrow ``chunks_vseq`` index (not the wide table) and joins the ids into one string that
        numpy parses and sorts — at 100k rows ~40 ms instead of ~200 ms for a Python loop over a
        table scan.
        """
        row = conn.execute("SELECT group_concat(rowid) FROM chunks INDEXED BY chunks_vseq").fetchone()
        if not row or not row[0]:
            return np.zeros(0, np.int64)
        return np.sort(np.fromstring(row[0], dtype=np.int64, sep=","))

    @staticmethod
    def filled_since(conn: sqlite3.Connection, generation: int, max_rowid: int) -> list[tuple[int, bytes]]:
        """(row id, vector) of rows up to ``max_rowid`` whose vector was set after ``generation``."""
        # by the stamp's index (the planner would otherwise walk every row id up to max_rowid)
        rows = conn.execute(
            "SELECT rowid, vector FROM chunks INDEXED BY chunks_vseq WHERE vseq > ? AND vector IS NOT NULL",
            (generation,),
        ).fetchall()
        return sorted(r for r in rows if r[0] <= max_rowid)

    @staticmethod
    def rows_after(conn: sqlite3.Connection, rowid: int) -> list[IndexRow]:
        return conn.execute(
            "SELECT rowid, id, metadata, terms, tfs, length, vector FROM chunks"
            " WHERE rowid > ? ORDER BY rowid",
            (rowid,),
        ).fetchall()

    # -- writes ----------------------------------------------------------------------------------

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for conn in self._conns:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._conns.clear()
