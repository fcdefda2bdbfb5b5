"""The embedded store (the default backend): one directory, no server.

Layout of the directory::

    store.sqlite        source of truth (WAL): chunks, parents, metadata, token ids, vectors
    index/cache.npz     derived search index (BM25 postings, vectors, metadata columns)
    index/hnsw-*.faiss  faiss HNSW graph over the vectors (stores ≥ 20k chunks)

The parts, one module each:

* :mod:`zhiwen.store._embedded_db` — the SQLite database: schema, reads, and writes as single
  transactions, so a failed :meth:`EmbeddedStore.upsert`/:meth:`delete` leaves the previous
  state intact on disk;
* :mod:`zhiwen.store._embedded_index` — immutable index snapshots, synced to any database state
  (after its own writes, another process's writes or a stale on-disk cache) by tombstoning the
  row ids that disappeared and appending the rows past its last one;
* :mod:`zhiwen.store._embedded_cache` — the index saved next to the database with atomic writes;
* this module — the :class:`~zhiwen.store.base.Store` facade: when to sync, when to build the
  HNSW graph, when to compact, when to save, and the two searches.

Nothing is rebuilt on write; the first search after a write syncs (a few ms for small batches),
and ``close()`` saves the index cache so the next process starts warm. Searches read an
immutable snapshot, so many threads may search while one thread writes. BM25 (k1 = 1.5,
b = 0.75) is computed at query time over term-major postings (:mod:`zhiwen.store._bm25`);
vectors use exact numpy search or faiss HNSW (:mod:`zhiwen.store._vectors`); metadata filters
are numpy masks (:mod:`zhiwen.store._columns`) applied inside both branches.

Example::

    store = EmbeddedStore(Path("kbs/manual/store"), dim=384)
    store.upsert(chunks, tokens=[tok.tokenize(c.text) for c in chunks], vectors=vecs, parents=docs)
    store.search_text(["宫保", "鸡丁"], k=10, filters=parse_filters({"category": "meat_dish"}))
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter
from zhiwen.store._embedded_cache import IndexCache
from zhiwen.store._embedded_db import ChunkDB
from zhiwen.store._embedded_index import Snapshot, append_rows, empty_snapshot, live_mask
from zhiwen.store._vectors import HNSW, HNSW_MIN_ROWS, VectorIndex, normalize_rows
from zhiwen.store.base import Scored
from zhiwen.store.filters import Filter

log = logging.getLogger(__name__)

INDEX_DIR = "index"
# rebuild (drop tombstoned rows) when this share of rows is dead and there are enough of them
_COMPACT_DEAD_SHARE = 0.3
_COMPACT_MIN_DEAD = 5_000


class EmbeddedStore:
    """SQLite + in-memory BM25/vector/metadata indexes in one directory (see module docstring)."""

    backend = "embedded"

    def __init__(self, path: Path, *, dim: int | None) -> None:
        self.path = Path(path)
        self._db = ChunkDB(self.path, dim=dim)
        self._cache = IndexCache(self.path / INDEX_DIR)
        self._snap: Snapshot | None = None
        self._hnsw: HNSW | None = None
        self._saved_generation = -1

    # -- protocol: properties and reads ---------------------------------------------------------------
    @property
    def dim(self) -> int | None:
        return self._db.dim

    def count(self) -> int:
        return self._db.count()

    def doc_ids(self) -> set[str]:
        return self._db.doc_ids()

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return self._db.get_chunks(ids)

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        return self._db.get_parents(ids)

    def stats(self) -> dict[str, Any]:
        n_chunks, n_docs, n_parents = self._db.counts()
        snap = self._snap
        return {
            "backend": self.backend,
            "chunks": n_chunks,
            "documents": n_docs,
            "parents": n_parents,
            "dim": self.dim,
            "path": str(self.path),
            "bytes": sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file()),
            "vocabulary": len(self._db.vocab),
            "hnsw": self._hnsw is not None,
            "index_rows": snap.n if snap else None,
        }

    # -- protocol: writes (the index syncs on the next search) ----------------------------------
    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        """Insert or replace chunks and parents in one transaction (see :class:`Store`)."""
        self._db.upsert(chunks, tokens=tokens, vectors=vectors, parents=parents)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        return self._db.delete(chunk_ids=chunk_ids, doc_ids=doc_ids)

    # -- protocol: search -------------------------------------------------------------------------
    def search_text(self, tokens: Sequence[str], k: int, filters: Filter | None = None) -> Scored:
        """BM25 over chunk tokens; only chunks matching ``filters``; only positive scores."""
        k = self._check_k(k)
        snap = self._snapshot()
        if not snap.n or not k:
            return []
        vocab = self._db.vocab
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
        dim = self.dim
        if dim is None:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (dim,) or not np.isfinite(q).all():
            raise InvalidParameter(
                f"query vector has shape {np.shape(vector)}, expected ({dim},)",
                message=f"查询向量维度应为 {dim}",
            )
        snap = self._snapshot()
        if not snap.n or not k or snap.vectors is None:
            return []
        pos, scores = snap.vectors.top_k(normalize_rows(q), k, allowed=snap.allowed(filters))
        return [(snap.ids[p], float(s)) for p, s in zip(pos.tolist(), scores.tolist(), strict=True)]

    @staticmethod
    def _check_k(k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise InvalidParameter(f"k must be a non-negative int, got {k!r}", message="k 必须是非负整数")
        return int(k)

    # -- keeping the index in sync --------------------------------------------------------------------
    def _snapshot(self) -> Snapshot:
        """The current index snapshot, synced to the database first when it changed."""
        gen = self._db.generation()  # raises StoreUnavailable once closed
        snap = self._snap
        if snap is not None and snap.generation == gen:
            return snap
        with self._db.lock:
            snap = self._snap
            if snap is not None and snap.generation == self._db.generation(self._db.wconn):
                return snap
            with self._db.consistent_read() as conn:  # one read of the database for the whole sync
                return self._sync(conn)

    def _sync(self, conn: sqlite3.Connection) -> Snapshot:
        gen = self._db.generation(conn)
        self._db.load_vocab(conn)
        snap = self._snap or self._load_cache() or empty_snapshot(self.dim, self._db.uuid)
        alive = live_mask(snap.rowids, self._db.rowids(conn))
        dead = int(snap.n - np.count_nonzero(alive))
        if dead >= _COMPACT_MIN_DEAD and dead > _COMPACT_DEAD_SHARE * max(snap.n, 1):
            log.info("compacting embedded store %s (%d dead rows)", self.path, dead)
            self._hnsw = None
            snap = empty_snapshot(self.dim, self._db.uuid)
            alive = np.zeros(0, bool)
        snap = self._append(snap, alive, gen)
        self._snap = snap
        if self._saved_generation < 0 and snap.n >= HNSW_MIN_ROWS:
            # a fresh build of a large store: persist now so the next process starts warm
            self._save_cache(snap)
        return snap

    def _append(self, snap: Snapshot, alive: np.ndarray, gen: int) -> Snapshot:
        """``snap`` with tombstones ``alive`` and every database row past its last row id appended."""
        rows = self._db.rows_after(self._db.wconn, snap.max_rowid)
        new = append_rows(snap, alive, rows, generation=gen, dim=self.dim)
        return dataclasses.replace(new, vectors=self._with_hnsw(new.vectors))

    def _with_hnsw(self, vectors: VectorIndex | None) -> VectorIndex | None:
        """``vectors`` with the store's HNSW graph, created once there are enough vectors, grown to fit."""
        if vectors is None:
            return None
        if self._hnsw is None and int(np.count_nonzero(vectors.has_vec)) >= HNSW_MIN_ROWS:
            log.info("building HNSW over %d vectors in %s", len(vectors.matrix), self.path)
            self._hnsw = HNSW.create(vectors.matrix.shape[1])
        if self._hnsw is not None:
            self._hnsw.add(vectors.matrix, len(vectors.matrix))
        return VectorIndex(vectors.matrix, vectors.has_vec, self._hnsw)

    # -- the on-disk cache of the index ---------------------------------------------------------------
    def _save_cache(self, snap: Snapshot) -> None:
        if self._cache.save(snap, self._hnsw):
            self._saved_generation = snap.generation

    def _load_cache(self) -> Snapshot | None:
        loaded = self._cache.load(db_uuid=self._db.uuid, dim=self.dim)
        if loaded is None:
            return None
        snap, self._hnsw = loaded
        self._saved_generation = snap.generation
        return dataclasses.replace(snap, vectors=self._with_hnsw(snap.vectors))

    def flush(self) -> None:
        """Bring the search index up to date and save it to disk (``close()`` does this too)."""
        with self._db.lock:
            snap = self._snapshot()
            if snap.generation != self._saved_generation and snap.n:
                self._save_cache(snap)

    def close(self) -> None:
        if self._db.closed:
            return
        try:
            self.flush()
        except Exception as exc:  # closing must not fail because the cache could not be written
            log.warning("could not flush index of %s: %s", self.path, exc)
        with self._db.lock:
            self._db.close()
            self._snap = None
            self._hnsw = None

    def __enter__(self) -> EmbeddedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddedStore({str(self.path)!r}, dim={self.dim})"
