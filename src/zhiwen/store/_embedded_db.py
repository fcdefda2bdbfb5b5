"""The SQLite source of truth of the embedded store: schema, connections, reads and atomic writes.

One file ``store.sqlite`` (WAL) per store holds chunks (text, metadata JSON, token ids and
counts, vector bytes, a content hash), parent documents, the token vocabulary and a ``meta``
table (store uuid, vector dimension, write generation). Every write is one ``BEGIN IMMEDIATE``
transaction that bumps the generation, so readers — the in-memory index of this or another
process — notice any change with one indexed read.

Row ids are ``AUTOINCREMENT``: never reused, and a changed chunk is written as a new row, so
the set of live row ids fully describes the state (the index syncs by row id, see
:mod:`zhiwen.store._embedded_index`). Re-upserting an identical chunk (same hash) keeps its row.

Example::

    db = ChunkDB(Path("kbs/manual/store"), dim=384)
    db.upsert(chunks, tokens=token_lists, vectors=vecs, parents=docs)
    with db.consistent_read() as conn:
        rows = db.rows_after(conn, 0)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._vectors import normalize_rows

DB_NAME = "store.sqlite"
_SQL_VARS = 500  # ids per IN (...) query, well under SQLite's variable limit

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
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE TABLE IF NOT EXISTS parents (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
"""

# What the index reads per chunk: (rowid, id, metadata JSON, term ids, tfs, length, vector)
IndexRow = tuple[int, str, str, bytes, bytes, int, bytes | None]
_PreparedChunk = tuple[Chunk, str, Counter[str], int, bytes | None, str]


def _batches(items: Sequence[Any], size: int = _SQL_VARS) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _marks(part: Sequence[Any]) -> str:
    return ",".join("?" * len(part))


def _dump_metadata(metadata: dict[str, Any], owner: str) -> str:
    try:
        return json.dumps(metadata, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParameter(
            f"metadata of {owner!r} is not JSON-serialisable: {exc}", message=f"元数据无法保存：{owner}"
        ) from exc


def check_batch(
    chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], vectors: np.ndarray | None, dim: int | None
) -> np.ndarray | None:
    """Validate one upsert batch; returns the vectors L2-normalised (None without vectors)."""
    if len(tokens) != len(chunks):
        raise InvalidParameter(
            f"{len(tokens)} token lists for {len(chunks)} chunks",
            message="分词结果数量与文本块数量不一致",
        )
    seen: set[str] = set()
    for c in chunks:
        if not isinstance(c, Chunk) or not isinstance(c.id, str) or not c.id:
            raise InvalidParameter(f"invalid chunk {c!r:.80}", message="文本块缺少有效的 id")
        if c.id in seen:
            raise InvalidParameter(
                f"duplicate chunk id {c.id!r} in one batch", message=f"文本块 id 重复：{c.id}"
            )
        seen.add(c.id)
    if any(isinstance(t, str) for t in tokens):
        raise InvalidParameter("tokens must be lists of strings, not a string", message="分词结果格式错误")
    if vectors is None:
        return None
    if dim is None:
        raise InvalidParameter("this store was created without vectors", message="该知识库未配置向量维度")
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape != (len(chunks), dim):
        raise InvalidParameter(
            f"vectors have shape {arr.shape}, expected ({len(chunks)}, {dim})",
            message=f"向量形状 {tuple(arr.shape)} 与期望的 ({len(chunks)}, {dim}) 不一致",
        )
    if not np.isfinite(arr).all():
        raise InvalidParameter("vectors contain NaN or inf", message="向量包含非法数值")
    return normalize_rows(arr)


def _prepare(
    chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], vecs: np.ndarray | None
) -> list[_PreparedChunk]:
    """Everything that can fail on bad input, computed before a transaction starts."""
    rows: list[_PreparedChunk] = []
    for i, chunk in enumerate(chunks):
        md = _dump_metadata(chunk.metadata, chunk.id)
        vec = None if vecs is None else vecs[i].tobytes()
        h = hashlib.blake2b(digest_size=16)
        for part in (chunk.doc_id, chunk.text, chunk.title, chunk.parent_id or "\x00", md):
            h.update(part.encode("utf-8") + b"\x1f")
        h.update("\x1f".join(map(str, tokens[i])).encode("utf-8") + b"\x1e")
        h.update(vec or b"")
        rows.append((chunk, md, Counter(str(t) for t in tokens[i]), len(tokens[i]), vec, h.hexdigest()))
    return rows


class ChunkDB:
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
            self.wconn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(
                f"cannot open embedded store at {self.path}: {exc}",
                message=f"无法打开知识库存储：{self.path}",
            ) from exc
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

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        found: dict[str, Document] = {}
        conn = self.rconn()
        for part in _batches(list(dict.fromkeys(ids))):
            q = f"SELECT id, text, title, metadata FROM parents WHERE id IN ({_marks(part)})"
            for pid, text, title, md in conn.execute(q, tuple(part)):
                found[pid] = Document(pid, text, title, json.loads(md))
        return [found[i] for i in ids if i in found]

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
        """Every live row id, ascending."""
        return np.fromiter((r[0] for r in conn.execute("SELECT rowid FROM chunks ORDER BY rowid")), np.int64)

    @staticmethod
    def rows_after(conn: sqlite3.Connection, rowid: int) -> list[IndexRow]:
        return conn.execute(
            "SELECT rowid, id, metadata, terms, tfs, length, vector FROM chunks"
            " WHERE rowid > ? ORDER BY rowid",
            (rowid,),
        ).fetchall()

    # -- writes ----------------------------------------------------------------------------------
    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        """Insert or replace chunks and parents in one transaction (see :class:`Store`)."""
        rows = _prepare(chunks, tokens, check_batch(chunks, tokens, vectors, self.dim))
        parent_rows = [
            (p.id, p.text, p.title, _dump_metadata(p.metadata, p.id))
            for p in parents
            if isinstance(p, Document)
        ]
        if len(parent_rows) != len(parents):
            raise InvalidParameter("parents must be Document objects", message="父文档类型错误")
        new_terms: dict[str, int] = {}
        with self.lock, self._transaction() as conn:
            self.load_vocab(conn)  # another process may have added terms
            changed = self._delete_stale(conn, chunks)
            existing: dict[str, tuple[int, str]] = {}
            for cids in _batches([c.id for c in chunks]):
                q = f"SELECT id, rowid, hash FROM chunks WHERE id IN ({_marks(cids)})"
                for cid, rowid, row_hash in conn.execute(q, tuple(cids)):
                    existing[cid] = (rowid, row_hash)
            for chunk, md, counts, length, vec, new_hash in rows:
                old = existing.get(chunk.id)
                if old is not None and old[1] == new_hash:
                    continue  # unchanged: keep the row (and its row id), nothing to re-index
                if old is not None:
                    conn.execute("DELETE FROM chunks WHERE rowid = ?", (old[0],))
                term_ids = np.empty(len(counts), np.int32)
                for j, term in enumerate(counts):
                    tid = self.vocab.get(term) or new_terms.get(term)
                    if tid is None:
                        cur = conn.execute("INSERT INTO vocab (term) VALUES (?)", (term,))
                        tid = new_terms[term] = int(cur.lastrowid or 0)
                    term_ids[j] = tid
                tfs = np.fromiter(counts.values(), np.int32, len(counts))
                conn.execute(
                    "INSERT INTO chunks (id, doc_id, text, title, parent_id, metadata, terms, tfs, length,"
                    " vector, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        *(chunk.id, chunk.doc_id, chunk.text, chunk.title, chunk.parent_id, md),
                        *(term_ids.tobytes(), tfs.tobytes(), length, vec, new_hash),
                    ),
                )
                changed += 1
            conn.executemany(
                "INSERT OR REPLACE INTO parents (id, text, title, metadata) VALUES (?, ?, ?, ?)", parent_rows
            )
            if changed:
                self._bump(conn)
        # only after the commit: the in-memory vocabulary learns the new terms
        for term, tid in new_terms.items():
            self.vocab[term] = tid
            self._vocab_max = max(self._vocab_max, tid)

    @staticmethod
    def _delete_stale(conn: sqlite3.Connection, chunks: Sequence[Chunk]) -> int:
        """Document-level replace: chunks of the batch's documents that are not in the batch go."""
        batch_ids = {c.id for c in chunks}
        removed = 0
        for docs in _batches(sorted({c.doc_id for c in chunks})):
            q = f"SELECT rowid, id FROM chunks WHERE doc_id IN ({_marks(docs)})"
            stale = [(r,) for r, cid in conn.execute(q, tuple(docs)).fetchall() if cid not in batch_ids]
            conn.executemany("DELETE FROM chunks WHERE rowid = ?", stale)
            removed += len(stale)
        return removed

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        if isinstance(chunk_ids, str) or isinstance(doc_ids, str):
            raise InvalidParameter(
                "chunk_ids/doc_ids must be sequences of ids", message="删除参数应为 id 列表"
            )
        removed = 0
        with self.lock, self._transaction() as conn:
            for part in _batches(list(dict.fromkeys(chunk_ids))):
                q = f"DELETE FROM chunks WHERE id IN ({_marks(part)})"
                removed += conn.execute(q, tuple(part)).rowcount
            for part in _batches(list(dict.fromkeys(doc_ids))):
                marks = _marks(part)
                parent_ids = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT DISTINCT parent_id FROM chunks WHERE doc_id IN ({marks})"
                        " AND parent_id IS NOT NULL",
                        tuple(part),
                    )
                ]
                removed += conn.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", tuple(part)).rowcount
                conn.execute(f"DELETE FROM parents WHERE id IN ({marks})", tuple(part))
                for pid in parent_ids:  # parents no chunk points to any more
                    still = conn.execute("SELECT 1 FROM chunks WHERE parent_id = ? LIMIT 1", (pid,))
                    if still.fetchone() is None:
                        conn.execute("DELETE FROM parents WHERE id = ?", (pid,))
            if removed:
                self._bump(conn)
        return removed

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.closed:
            raise StoreUnavailable("store is closed", message="知识库存储已关闭")
        conn = self.wconn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(value AS INTEGER) + 1"
        )

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for conn in self._conns:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._conns.clear()
