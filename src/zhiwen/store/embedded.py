"""The embedded store (the default backend): one directory, no server.

Layout of the directory::

    store.sqlite        source of truth (WAL): chunks, parents, metadata, token ids, vectors
    index/cache.npz     derived search index (BM25 postings, vectors, metadata columns)
    index/hnsw-*.faiss  faiss HNSW graph over the vectors (stores ≥ 20k chunks)

Writes are SQLite transactions, so a failed :meth:`EmbeddedStore.upsert`/:meth:`delete` leaves
the previous state intact on disk. Row ids are never reused and a changed chunk is written as
a new row (``AUTOINCREMENT``), so the set of live row ids fully describes the state: the
in-memory search index syncs to any state — after its own writes, another process's writes
or a stale on-disk cache — by tombstoning the row ids that disappeared and appending the rows
past its last one. Nothing is rebuilt on write; the first search after a write syncs (a few
ms for small batches), and ``close()`` saves the index cache so the next process starts warm.

Searches read an immutable snapshot, so many threads may search while one thread writes.
BM25 (k1 = 1.5, b = 0.75) is computed at query time over term-major postings
(:mod:`zhiwen.store._bm25`); vectors use exact numpy search or faiss HNSW
(:mod:`zhiwen.store._vectors`); metadata filters are numpy masks
(:mod:`zhiwen.store._columns`) applied inside both branches.

Example::

    store = EmbeddedStore(Path("kbs/recipes/store"), dim=384)
    store.upsert(chunks, tokens=[tok.tokenize(c.text) for c in chunks], vectors=vecs, parents=docs)
    store.search_text(["宫保", "鸡丁"], k=10, filters=parse_filters({"category": "meat_dish"}))
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._bm25 import BM25Index, Postings
from zhiwen.store._columns import MetadataColumns, pack_strs, unpack_strs
from zhiwen.store._vectors import HNSW, HNSW_MIN_ROWS, VectorIndex, normalize_rows
from zhiwen.store.base import Scored
from zhiwen.store.filters import Filter, parse_filters

log = logging.getLogger(__name__)

DB_NAME = "store.sqlite"
INDEX_DIR = "index"
CACHE_NAME = "cache.npz"
CACHE_VERSION = 1
_SQL_VARS = 500  # ids per IN (...) query, well under SQLite's variable limit
# merge the BM25 delta segment into the base when it holds this share of all postings
_DELTA_MERGE_SHARE = 0.2
# rebuild (drop tombstoned rows) when this share of rows is dead and there are enough of them
_COMPACT_DEAD_SHARE = 0.3
_COMPACT_MIN_DEAD = 5_000

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


def _batches(items: Sequence[Any], size: int = _SQL_VARS) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _dump_metadata(metadata: dict[str, Any], owner: str) -> str:
    try:
        return json.dumps(metadata, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParameter(
            f"metadata of {owner!r} is not JSON-serialisable: {exc}", message=f"元数据无法保存：{owner}"
        ) from exc


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """An immutable view of the index: row position → everything a search needs."""

    rowids: np.ndarray  # int64, ascending
    ids: list[str]
    alive: np.ndarray  # bool
    bm25: BM25Index
    columns: MetadataColumns
    vectors: VectorIndex | None
    generation: int
    db_uuid: str
    live_stats: tuple[int, float] = (0, 1.0)  # BM25 collection statistics over live rows

    @property
    def n(self) -> int:
        return len(self.rowids)

    @property
    def max_rowid(self) -> int:
        return int(self.rowids[-1]) if len(self.rowids) else 0

    def allowed(self, filters: Filter | None) -> np.ndarray:
        mask = self.columns.mask(parse_filters(filters))  # a dict spec is accepted too
        return self.alive if mask is None else self.alive & mask


class EmbeddedStore:
    """SQLite + in-memory BM25/vector/metadata indexes in one directory (see module docstring)."""

    backend = "embedded"

    def __init__(self, path: Path, *, dim: int | None) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()  # writes, syncs, connection bookkeeping
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._closed = False
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            (self.path / INDEX_DIR).mkdir(exist_ok=True)
            self._wconn = self._connect()
            self._wconn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(
                f"cannot open embedded store at {self.path}: {exc}",
                message=f"无法打开知识库存储：{self.path}",
            ) from exc
        self._db_uuid = self._meta_init("uuid", uuid.uuid4().hex) or ""
        self._dim = self._resolve_dim(dim)
        self._vocab: dict[str, int] = {}
        self._vocab_max = 0
        self._load_vocab(self._wconn)
        self._snap: _Snapshot | None = None
        self._hnsw: HNSW | None = None
        self._saved_generation = -1

    # -- connections ------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path / DB_NAME, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            self._conns.append(conn)
        return conn

    def _rconn(self) -> sqlite3.Connection:
        """A per-thread read connection (WAL readers never block the writer)."""
        if self._closed:
            raise StoreUnavailable("store is closed", message="知识库存储已关闭")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _meta_init(self, key: str, value: str | None) -> str | None:
        row = self._wconn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0]) if row[0] is not None else None
        if value is not None:
            self._wconn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))
        return value

    def _resolve_dim(self, dim: int | None) -> int | None:
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0):
            raise InvalidParameter(f"dim must be a positive int, got {dim!r}", message="向量维度必须是正整数")
        row = self._wconn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        stored = int(row[0]) if row and row[0] else None
        if stored is not None and dim is not None and stored != dim:
            raise InvalidParameter(
                f"store at {self.path} has vectors of dim {stored}, not {dim}",
                message=f"知识库的向量维度为 {stored}，与当前嵌入模型的 {dim} 不一致，请重建知识库",
            )
        if stored is None and dim is not None:
            self._wconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('dim', ?)", (str(dim),))
        return stored if stored is not None else dim

    def _load_vocab(self, conn: sqlite3.Connection) -> None:
        for term_id, term in conn.execute("SELECT id, term FROM vocab WHERE id > ?", (self._vocab_max,)):
            self._vocab[term] = term_id
            self._vocab_max = max(self._vocab_max, term_id)

    @staticmethod
    def _generation(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    # -- protocol: properties and reads ---------------------------------------------------------------
    @property
    def dim(self) -> int | None:
        return self._dim

    def count(self) -> int:
        return int(self._rconn().execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def doc_ids(self) -> set[str]:
        return {r[0] for r in self._rconn().execute("SELECT DISTINCT doc_id FROM chunks")}

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        found: dict[str, Chunk] = {}
        conn = self._rconn()
        unique = list(dict.fromkeys(ids))
        for part in _batches(unique):
            q = "SELECT id, doc_id, text, title, parent_id, metadata FROM chunks WHERE id IN ({})"
            for cid, doc_id, text, title, parent_id, md in conn.execute(
                q.format(",".join("?" * len(part))), tuple(part)
            ):
                found[cid] = Chunk(cid, doc_id, text, title, parent_id, json.loads(md))
        return [found[i] for i in ids if i in found]

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        found: dict[str, Document] = {}
        conn = self._rconn()
        unique = list(dict.fromkeys(ids))
        for part in _batches(unique):
            q = "SELECT id, text, title, metadata FROM parents WHERE id IN ({})"
            for pid, text, title, md in conn.execute(q.format(",".join("?" * len(part))), tuple(part)):
                found[pid] = Document(pid, text, title, json.loads(md))
        return [found[i] for i in ids if i in found]

    def stats(self) -> dict[str, Any]:
        conn = self._rconn()
        n_chunks = int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        n_docs = int(conn.execute("SELECT COUNT(DISTINCT doc_id) FROM chunks").fetchone()[0])
        n_parents = int(conn.execute("SELECT COUNT(*) FROM parents").fetchone()[0])
        size = sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())
        snap = self._snap
        return {
            "backend": self.backend,
            "chunks": n_chunks,
            "documents": n_docs,
            "parents": n_parents,
            "dim": self._dim,
            "path": str(self.path),
            "bytes": size,
            "vocabulary": len(self._vocab),
            "hnsw": self._hnsw is not None,
            "index_rows": snap.n if snap else None,
        }

    # -- protocol: writes -------------------------------------------------------------------------
    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        """Insert or replace chunks and parents in one transaction (see :class:`Store`)."""
        vecs = self._check_upsert(chunks, tokens, vectors)
        # everything that can fail on bad input is computed before the transaction starts
        rows: list[tuple[Chunk, str, Counter[str], int, bytes | None, str]] = []
        for i, chunk in enumerate(chunks):
            md = _dump_metadata(chunk.metadata, chunk.id)
            counts = Counter(str(t) for t in tokens[i])
            vec = None if vecs is None else vecs[i].tobytes()
            h = hashlib.blake2b(digest_size=16)
            for part in (chunk.doc_id, chunk.text, chunk.title, chunk.parent_id or "\x00", md):
                h.update(part.encode("utf-8") + b"\x1f")
            h.update("\x1f".join(map(str, tokens[i])).encode("utf-8") + b"\x1e")
            h.update(vec or b"")
            rows.append((chunk, md, counts, len(tokens[i]), vec, h.hexdigest()))
        parent_rows = [
            (p.id, p.text, p.title, _dump_metadata(p.metadata, p.id))
            for p in parents
            if isinstance(p, Document)
        ]
        if len(parent_rows) != len(parents):
            raise InvalidParameter("parents must be Document objects", message="父文档类型错误")
        with self._lock, self._transaction() as conn:
            self._load_vocab(conn)  # another process may have added terms
            new_terms: dict[str, int] = {}
            batch_ids = {c.id for c in chunks}
            changed = 0
            # document-level replace: chunks of these documents that are not in this batch go
            doc_list = sorted({c.doc_id for c in chunks})
            for docs in _batches(doc_list):
                q = "SELECT rowid, id FROM chunks WHERE doc_id IN ({})".format(",".join("?" * len(docs)))
                stale = [(r,) for r, cid in conn.execute(q, tuple(docs)).fetchall() if cid not in batch_ids]
                conn.executemany("DELETE FROM chunks WHERE rowid = ?", stale)
                changed += len(stale)
            existing: dict[str, tuple[int, str]] = {}
            for cids in _batches([c.id for c in chunks]):
                q = "SELECT id, rowid, hash FROM chunks WHERE id IN ({})".format(",".join("?" * len(cids)))
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
                    tid = self._vocab.get(term) or new_terms.get(term)
                    if tid is None:
                        cur = conn.execute("INSERT INTO vocab (term) VALUES (?)", (term,))
                        tid = new_terms[term] = int(cur.lastrowid or 0)
                    term_ids[j] = tid
                tfs = np.fromiter(counts.values(), np.int32, len(counts))
                conn.execute(
                    "INSERT INTO chunks (id, doc_id, text, title, parent_id, metadata, terms, tfs, length,"
                    " vector, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        chunk.id,
                        chunk.doc_id,
                        chunk.text,
                        chunk.title,
                        chunk.parent_id,
                        md,
                        term_ids.tobytes(),
                        tfs.tobytes(),
                        length,
                        vec,
                        new_hash,
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
            self._vocab[term] = tid
            self._vocab_max = max(self._vocab_max, tid)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        if isinstance(chunk_ids, str) or isinstance(doc_ids, str):
            raise InvalidParameter(
                "chunk_ids/doc_ids must be sequences of ids", message="删除参数应为 id 列表"
            )
        removed = 0
        with self._lock, self._transaction() as conn:
            for part in _batches(list(dict.fromkeys(chunk_ids))):
                q = "DELETE FROM chunks WHERE id IN ({})".format(",".join("?" * len(part)))
                removed += conn.execute(q, tuple(part)).rowcount
            docs = list(dict.fromkeys(doc_ids))
            parents_gone = 0
            for part in _batches(docs):
                marks = ",".join("?" * len(part))
                orphan_candidates = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT DISTINCT parent_id FROM chunks WHERE doc_id IN ({marks})"
                        " AND parent_id IS NOT NULL",
                        tuple(part),
                    )
                ]
                removed += conn.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", tuple(part)).rowcount
                parents_gone += conn.execute(
                    f"DELETE FROM parents WHERE id IN ({marks})", tuple(part)
                ).rowcount
                for pid in orphan_candidates:
                    still = conn.execute(
                        "SELECT 1 FROM chunks WHERE parent_id = ? LIMIT 1", (pid,)
                    ).fetchone()
                    if still is None:
                        parents_gone += conn.execute("DELETE FROM parents WHERE id = ?", (pid,)).rowcount
            if removed:
                self._bump(conn)
        return removed

    def _check_upsert(
        self, chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], vectors: np.ndarray | None
    ) -> np.ndarray | None:
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
        for t in tokens:
            if isinstance(t, str):
                raise InvalidParameter(
                    "tokens must be lists of strings, not a string", message="分词结果格式错误"
                )
        if vectors is None:
            return None
        if self._dim is None:
            raise InvalidParameter("this store was created without vectors", message="该知识库未配置向量维度")
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape != (len(chunks), self._dim):
            raise InvalidParameter(
                f"vectors have shape {arr.shape}, expected ({len(chunks)}, {self._dim})",
                message=f"向量形状 {tuple(arr.shape)} 与期望的 ({len(chunks)}, {self._dim}) 不一致",
            )
        if not np.isfinite(arr).all():
            raise InvalidParameter("vectors contain NaN or inf", message="向量包含非法数值")
        return normalize_rows(arr)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise StoreUnavailable("store is closed", message="知识库存储已关闭")
        conn = self._wconn
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

    # -- protocol: search -------------------------------------------------------------------------
    def search_text(self, tokens: Sequence[str], k: int, filters: Filter | None = None) -> Scored:
        """BM25 over chunk tokens; only chunks matching ``filters``; only positive scores."""
        k = self._check_k(k)
        snap = self._snapshot()
        if not snap.n or not k:
            return []
        vocab = self._vocab
        term_ids = [tid for t in tokens if (tid := vocab.get(t)) is not None]
        if not term_ids:
            return []
        pos, scores = snap.bm25.top_k(
            term_ids, k, alive=snap.alive, allowed=snap.allowed(filters), live_stats=snap.live_stats
        )
        return [(snap.ids[p], float(s)) for p, s in zip(pos.tolist(), scores.tolist(), strict=True)]

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        """Cosine nearest neighbours; only chunks matching ``filters``."""
        k = self._check_k(k)
        if self._dim is None:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (self._dim,) or not np.isfinite(q).all():
            raise InvalidParameter(
                f"query vector has shape {np.shape(vector)}, expected ({self._dim},)",
                message=f"查询向量维度应为 {self._dim}",
            )
        snap = self._snapshot()
        if not snap.n or not k or snap.vectors is None:
            return []
        q = normalize_rows(q)
        pos, scores = snap.vectors.top_k(q, k, allowed=snap.allowed(filters))
        return [(snap.ids[p], float(s)) for p, s in zip(pos.tolist(), scores.tolist(), strict=True)]

    @staticmethod
    def _check_k(k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise InvalidParameter(f"k must be a non-negative int, got {k!r}", message="k 必须是非负整数")
        return int(k)

    # -- the derived index --------------------------------------------------------------------------
    def _snapshot(self) -> _Snapshot:
        """The current index snapshot, synced to the database first when it changed."""
        gen = self._generation(self._rconn())
        snap = self._snap
        if snap is not None and snap.generation == gen:
            return snap
        with self._lock:
            snap = self._snap
            if snap is not None and snap.generation == self._generation(self._wconn):
                return snap
            conn = self._wconn
            conn.execute("BEGIN")  # one consistent read of the database for the whole sync
            try:
                snap = self._sync(conn)
            finally:
                conn.execute("COMMIT")
            return snap

    def _sync(self, conn: sqlite3.Connection) -> _Snapshot:
        gen = self._generation(conn)
        self._load_vocab(conn)
        snap = self._snap or self._load_cache() or self._empty()
        db_rowids = np.fromiter(
            (r[0] for r in conn.execute("SELECT rowid FROM chunks ORDER BY rowid")), np.int64
        )
        alive = np.zeros(snap.n, bool)
        if snap.n and len(db_rowids):
            pos = np.searchsorted(snap.rowids, db_rowids)
            inside = pos < snap.n
            pos_in = pos[inside]
            hit = snap.rowids[pos_in] == db_rowids[inside]
            alive[pos_in[hit]] = True
        dead = int(snap.n - np.count_nonzero(alive))
        if dead >= _COMPACT_MIN_DEAD and dead > _COMPACT_DEAD_SHARE * max(snap.n, 1):
            log.info("compacting embedded store %s (%d dead rows)", self.path, dead)
            self._hnsw = None
            snap = self._empty()
            alive = np.zeros(0, bool)
        snap = self._append(snap, alive, gen)
        self._snap = snap
        if self._saved_generation < 0 and snap.n >= HNSW_MIN_ROWS:
            # a fresh build of a large store: persist now so the next process starts warm
            self._save_cache(snap)
        return snap

    def _empty(self) -> _Snapshot:
        empty_seg = Postings.build(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32))
        vectors = None
        if self._dim is not None:
            vectors = VectorIndex(np.zeros((0, self._dim), np.float32), np.zeros(0, bool))
        return _Snapshot(
            rowids=np.zeros(0, np.int64),
            ids=[],
            alive=np.zeros(0, bool),
            bm25=BM25Index((empty_seg,), np.zeros(0, np.float32)),
            columns=MetadataColumns(),
            vectors=vectors,
            generation=-1,
            db_uuid=self._db_uuid,
        )

    def _append(self, snap: _Snapshot, alive: np.ndarray, gen: int) -> _Snapshot:
        """``snap`` with tombstones ``alive`` and every database row past its last row id appended."""
        rows = self._wconn.execute(
            "SELECT rowid, id, metadata, terms, tfs, length, vector FROM chunks"
            " WHERE rowid > ? ORDER BY rowid",
            (snap.max_rowid,),
        ).fetchall()
        start = snap.n
        m = len(rows)
        rowids = np.concatenate([snap.rowids, np.fromiter((r[0] for r in rows), np.int64, m)])
        ids = snap.ids + [r[1] for r in rows]
        alive = np.concatenate([alive, np.ones(m, bool)])
        lengths = np.concatenate([snap.bm25.lengths, np.fromiter((r[5] for r in rows), np.float32, m)])
        segments = snap.bm25.segments
        if m:
            terms = [np.frombuffer(r[3], np.int32) for r in rows]
            tfs = np.concatenate([np.frombuffer(r[4], np.int32) for r in rows]).astype(np.float32)
            row_pos = np.repeat(np.arange(start, start + m, dtype=np.int32), [len(t) for t in terms])
            new_seg = Postings.build(row_pos, np.concatenate(terms), tfs)
            segments = self._merge_segments(segments, new_seg)
        columns = snap.columns.append([json.loads(r[2]) for r in rows]) if m else snap.columns
        vectors = self._append_vectors(snap.vectors, rows, start)
        bm25 = BM25Index(segments, lengths)
        return _Snapshot(
            rowids=rowids,
            ids=ids,
            alive=alive,
            bm25=bm25,
            columns=columns,
            vectors=vectors,
            generation=gen,
            db_uuid=self._db_uuid,
            live_stats=bm25.live_stats(alive),
        )

    @staticmethod
    def _merge_segments(segments: tuple[Postings, ...], new: Postings) -> tuple[Postings, ...]:
        base = segments[0]
        if not base.nnz():
            return (new,)
        delta = Postings.merge([*segments[1:], new])
        if delta.nnz() > _DELTA_MERGE_SHARE * (base.nnz() + delta.nnz()):
            return (Postings.merge([base, delta]),)
        return (base, delta)

    def _append_vectors(self, old: VectorIndex | None, rows: list[Any], start: int) -> VectorIndex | None:
        if self._dim is None:
            return None
        dim = self._dim
        m = len(rows)
        prev = old.matrix if old is not None else np.zeros((0, dim), np.float32)
        has_prev = old.has_vec if old is not None else np.zeros(0, bool)
        n = start + m
        # amortised growth: old snapshots keep viewing rows [:start] of the same buffer, which
        # are never written again, so readers need no copy
        base = prev.base if isinstance(prev.base, np.ndarray) and prev.base.ndim == 2 else None
        if base is not None and base.shape[0] >= n and prev.shape[0] == start:
            buf = base
        else:
            buf = np.zeros((max(n, int(n * 1.25) + 1024), dim), np.float32)
            buf[:start] = prev
        has_vec = np.concatenate([has_prev, np.zeros(m, bool)])
        for i, r in enumerate(rows):
            if r[6] is not None:
                buf[start + i] = np.frombuffer(r[6], np.float32)
                has_vec[start + i] = True
        matrix = buf[:n]
        if self._hnsw is None and int(np.count_nonzero(has_vec)) >= HNSW_MIN_ROWS:
            log.info("building HNSW over %d vectors in %s", n, self.path)
            self._hnsw = HNSW.create(dim)
        if self._hnsw is not None:
            self._hnsw.add(matrix, n)
        return VectorIndex(matrix, has_vec, self._hnsw)

    # -- on-disk cache of the derived index ---------------------------------------------------------
    def _cache_path(self) -> Path:
        return self.path / INDEX_DIR / CACHE_NAME

    def _save_cache(self, snap: _Snapshot) -> None:
        """Write the index next to the database: new files first, then an atomic rename."""
        index_dir = self.path / INDEX_DIR
        seg = snap.bm25.segments[0] if len(snap.bm25.segments) == 1 else Postings.merge(snap.bm25.segments)
        token = uuid.uuid4().hex[:12]
        arrays: dict[str, np.ndarray] = {
            "version": np.array([CACHE_VERSION], np.int64),
            "generation": np.array([snap.generation], np.int64),
            "db_uuid": pack_strs([snap.db_uuid]),
            "hnsw_token": pack_strs([token if self._hnsw is not None else ""]),
            "rowids": snap.rowids,
            "ids": pack_strs(snap.ids),
            "alive": snap.alive,
            "lengths": snap.bm25.lengths,
            "indptr": seg.indptr,
            "post_rows": seg.rows,
            "post_tfs": seg.tfs,
            **snap.columns.to_arrays(),
        }
        if snap.vectors is not None:
            arrays["matrix"] = snap.vectors.matrix
            arrays["has_vec"] = snap.vectors.has_vec
        try:
            if self._hnsw is not None:
                tmp_h = index_dir / f".hnsw-{token}.tmp"
                self._hnsw.save(tmp_h)
                os.replace(tmp_h, index_dir / f"hnsw-{token}.faiss")
            tmp = index_dir / f".cache-{token}.tmp.npz"
            np.savez(tmp, **arrays)  # type: ignore[arg-type]
            os.replace(tmp, self._cache_path())
            for old in index_dir.glob("hnsw-*.faiss"):
                if old.name != f"hnsw-{token}.faiss":
                    old.unlink(missing_ok=True)
            self._saved_generation = snap.generation
        except OSError as exc:  # the cache is an optimisation: log and go on
            log.warning("could not save index cache in %s: %s", index_dir, exc)

    def _load_cache(self) -> _Snapshot | None:
        path = self._cache_path()
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files}
            if (
                int(arrays["version"][0]) != CACHE_VERSION
                or unpack_strs(arrays["db_uuid"])[0] != self._db_uuid
            ):
                return None
            vectors = None
            if self._dim is not None:
                matrix = arrays.get("matrix")
                if matrix is None or matrix.shape[1:] != (self._dim,):
                    return None
                token = unpack_strs(arrays["hnsw_token"])[0]
                hnsw_path = self.path / INDEX_DIR / f"hnsw-{token}.faiss"
                if token and hnsw_path.exists():
                    hnsw = HNSW.load(hnsw_path)
                    if hnsw.size == len(matrix):
                        self._hnsw = hnsw
                vectors = VectorIndex(matrix, arrays["has_vec"], self._hnsw)
            snap = _Snapshot(
                rowids=arrays["rowids"],
                ids=unpack_strs(arrays["ids"]),
                alive=arrays["alive"],
                bm25=BM25Index(
                    (Postings(arrays["indptr"], arrays["post_rows"], arrays["post_tfs"]),), arrays["lengths"]
                ),
                columns=MetadataColumns.from_arrays(arrays),
                vectors=vectors,
                generation=int(arrays["generation"][0]),
                db_uuid=self._db_uuid,
            )
        except Exception as exc:  # a corrupt or foreign cache is rebuilt from the database
            log.warning("ignoring index cache %s: %s", path, exc)
            self._hnsw = None
            return None
        self._saved_generation = snap.generation
        if snap.vectors is not None and self._hnsw is None and snap.vectors.has_vec.sum() >= HNSW_MIN_ROWS:
            self._hnsw = HNSW.create(self._dim or 0)
            self._hnsw.add(snap.vectors.matrix, snap.n)
            snap = dataclasses.replace(
                snap, vectors=VectorIndex(snap.vectors.matrix, snap.vectors.has_vec, self._hnsw)
            )
        return snap

    def flush(self) -> None:
        """Bring the search index up to date and save it to disk (``close()`` does this too)."""
        with self._lock:
            snap = self._snapshot()
            if snap.generation != self._saved_generation and snap.n:
                self._save_cache(snap)

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.flush()
        except Exception as exc:  # closing must not fail because the cache could not be written
            log.warning("could not flush index of %s: %s", self.path, exc)
        with self._lock:
            self._closed = True
            for conn in self._conns:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._conns.clear()
            self._snap = None
            self._hnsw = None

    def __enter__(self) -> EmbeddedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddedStore({str(self.path)!r}, dim={self._dim})"
