"""The embedded store (the default backend): one directory, no server.

Layout of the directory::

    store.sqlite        source of truth (WAL): chunks, parents, metadata, token ids, vectors
    index/cache.npz     derived search index (BM25 postings, vectors, metadata columns)
    index/hnsw-*.faiss  faiss HNSW graph over the vectors (stores ≥ 20k vectors)
    writer.lock         the writer lock (``writer_lock()``: one index run at a time, any process)

The parts, one module each:

* :mod:`zhiwen.store._embedded_db` — the SQLite database: schema, reads, and writes as single
  transactions, so a failed :meth:`EmbeddedStore.upsert`/:meth:`delete` leaves the previous
  state intact on disk;
* :mod:`zhiwen.store._embedded_index` — immutable index snapshots, synced to any database state
  (after its own writes, another process's writes or a stale on-disk cache) by tombstoning the
  row ids that disappeared and appending the rows past its last one;
* :mod:`zhiwen.store._embedded_cache` — the index saved next to the database with atomic writes;
* :mod:`zhiwen.store._embedded_graph` — the HNSW graph, built in a background thread once
  writes settle (or by :meth:`EmbeddedStore.build_index`), never by a search;
* this module — the :class:`~zhiwen.store.base.Store` facade: when to sync, when to compact,
  when to save, and the two searches.

Nothing is rebuilt on write; the first search after a write syncs (a few ms for small batches),
and ``close()`` saves the index cache so the next process starts warm. Searches read an
immutable snapshot, so many threads may search while one thread writes.

Vectors are optional per chunk (lexical-first indexing): rows written without one are
BM25-searchable at once, here and in every process that opens the directory (each write bumps
the database's generation, which every search checks with one indexed read). ``set_vectors``
stamps the rows it fills with the generation it creates, so a sync reads just those rows
(``filled_since``) and writes them into its matrix; ``vector_count()`` and ``count()`` come from
the synced index (O(1) per generation), or from two indexed SQL counts before the first sync. BM25 (k1 = 1.5,
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
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter
from zhiwen.store._bm25 import K1 as BM25_K1
from zhiwen.store._bm25 import B as BM25_B
from zhiwen.store._embedded_cache import IndexCache
from zhiwen.store._embedded_db import ChunkDB
from zhiwen.store._embedded_graph import GraphBuilder
from zhiwen.store._embedded_index import Snapshot, append_rows, empty_snapshot, fill_vectors, live_mask
from zhiwen.store._vectors import HNSW, VectorIndex, normalize_rows
from zhiwen.store._writer_lock import WRITER_LOCK_FILE, FileWriterLock, OnWait
from zhiwen.store.base import Scored, StoreFeatures
from zhiwen.store.filters import Filter

log = logging.getLogger(__name__)

INDEX_DIR = "index"
# rebuild (drop tombstoned rows) when this share of rows is dead and there are enough of them
_COMPACT_DEAD_SHARE = 0.3
_COMPACT_MIN_DEAD = 5_000


class EmbeddedStore:
    """SQLite + in-memory BM25/vector/metadata indexes in one directory (see module docstring)."""

    backend = "embedded"
    features = StoreFeatures(bm25_params=True, term_weights=True, lexical_first=True)

    def __init__(self, path: Path, *, dim: int | None, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or self.path.name  # the knowledge base's, for messages
        self._db = ChunkDB(self.path, dim=dim)
        self._cache = IndexCache(self.path / INDEX_DIR)
        self._snap: Snapshot | None = None
        self._hnsw: HNSW | None = None
        self._saved_generation = -1
        self._saved_key: tuple[int, ...] = ()  # what the on-disk cache holds (see _cache_key)
        self._layout = 0  # bumped whenever row positions change (fresh, loaded or compacted index)
        self._graph = GraphBuilder(self)
        self._save_lock = threading.Lock()
        # per snapshot generation: (generation, live chunks, live chunks with a vector)
        self._counts: tuple[int, int, int] = (-2, 0, 0)
        self._fields: tuple[int, frozenset[str]] = (-2, frozenset())  # (snapshot generation, fields)

    # -- protocol: properties and reads ---------------------------------------------------------------
    @property
    def dim(self) -> int | None:
        return self._db.dim

    def count(self) -> int:
        counts = self._synced_counts()
        return counts[0] if counts is not None else self._db.count()

    def vector_count(self) -> int:
        """Chunks with a vector: from the synced index (O(1)), else two indexed SQL counts."""
        if self.dim is None:
            return 0
        counts = self._synced_counts()
        if counts is not None:
            return counts[1]
        return self._db.count() - self._db.missing_vector_count()

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        """Chunks still without a vector, in insertion order (none for a store without vectors)."""
        if self.dim is None:
            return []
        return self._db.missing_vector_ids(limit)

    def _synced_counts(self) -> tuple[int, int] | None:
        """(chunks, chunks with a vector) when the in-memory index is current, else None."""
        snap = self._snap
        if snap is None or snap.generation != self._db.generation():
            return None
        gen, n, n_vec = self._counts
        if gen != snap.generation:
            n = int(np.count_nonzero(snap.alive))
            n_vec = 0 if snap.vectors is None else int(np.count_nonzero(snap.alive & snap.vectors.has_vec))
            self._counts = (snap.generation, n, n_vec)
        return n, n_vec

    def doc_ids(self) -> set[str]:
        return self._db.doc_ids()

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return self._db.get_chunks(ids)

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        return self._db.get_parents(ids)

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors (float32, L2-normalised) by chunk id; ids without a vector are absent."""
        if self.dim is None:
            return {}
        return self._db.get_vectors(ids)

    def metadata_fields(self) -> set[str]:
        """Metadata keys with a non-null value in at least one live chunk (cached per generation)."""
        snap = self._snapshot()
        gen, fields = self._fields
        if gen != snap.generation:
            fields = frozenset(snap.columns.present_fields(snap.alive))
            self._fields = (snap.generation, fields)
        return set(fields)

    def stats(self) -> dict[str, Any]:
        n_chunks, n_docs, n_parents = self._db.counts()
        snap = self._snap
        graph = self._hnsw
        return {
            "backend": self.backend,
            "chunks": n_chunks,
            "documents": n_docs,
            "parents": n_parents,
            "dim": self.dim,
            "path": str(self.path),
            "bytes": sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file()),
            "vocabulary": len(self._db.vocab),
            "vectors": self.vector_count(),
            "hnsw": graph is not None,
            # "ready" | "building" | "pending" (needed, not built or behind) | "not_needed";
            # "pending" too before this process has loaded its index (first search)
            "vector_index": self._graph.state(snap) if snap else self._unloaded_graph_state(n_chunks),
            "index_rows": snap.n if snap else None,
        }

    def _unloaded_graph_state(self, n_chunks: int) -> str:
        from zhiwen.store import _vectors

        if self.dim is None or n_chunks - self._db.missing_vector_count() < _vectors.HNSW_MIN_ROWS:
            return "not_needed"
        return "pending"

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

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
        remove: Sequence[str] = (),
    ) -> None:
        """Chunk-level write in one transaction (see :meth:`Store.put_chunks`)."""
        self._db.put_chunks(chunks, tokens=tokens, vectors=vectors, parents=parents, remove=remove)

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        """New tokens for existing chunks, text and vectors kept (see :meth:`Store.set_tokens`)."""
        return self._db.set_tokens(ids, tokens)

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        return self._db.list_chunk_ids(doc_ids)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        return self._db.delete(chunk_ids=chunk_ids, doc_ids=doc_ids)

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Fill the vectors of existing chunks in one transaction; unknown ids are ignored.

        Other processes see the vectors at their next search (the write bumps the generation;
        their sync reads only the rows filled since, by an index on the fill stamp).
        """
        return self._db.set_vectors(ids, vectors)

    def build_index(self, *, background: bool = True) -> None:
        """Build or grow the HNSW graph now (``background``: in a daemon thread) and save it.

        A no-op below ``HNSW_MIN_ROWS`` vectors. Without this call the graph is still built in
        the background, once the store has been quiet for a moment after a search synced it.
        """
        if background:
            self._graph.kick(force=True)
        else:
            self._graph.build()

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: OnWait | None = None
    ) -> AbstractContextManager[None]:
        """One writer across processes: a file lock on ``writer.lock`` in the store directory."""
        lock = FileWriterLock(self.path / WRITER_LOCK_FILE, kb=self.name)
        return lock.hold(wait=wait, timeout=timeout, on_wait=on_wait)

    # -- protocol: search -------------------------------------------------------------------------
    def search_text(
        self,
        tokens: Sequence[str],
        k: int,
        filters: Filter | None = None,
        *,
        k1: float | None = None,
        b: float | None = None,
        weights: Sequence[float] | None = None,
    ) -> Scored:
        """BM25 over chunk tokens; only chunks matching ``filters``; only positive scores.

        ``k1``/``b`` override the defaults (a KB's tuned values); ``weights`` (one per token)
        scale each query term, for pseudo-relevance feedback's expanded query.
        """
        k = self._check_k(k)
        snap = self._snapshot()
        if not snap.n or not k:
            return []
        vocab = self._db.vocab
        known = [(tid, i) for i, t in enumerate(tokens) if (tid := vocab.get(t)) is not None]
        if not known:
            return []
        term_ids = [tid for tid, _ in known]
        pos, scores = snap.bm25.top_k(
            term_ids,
            k,
            alive=snap.alive,
            allowed=snap.allowed(filters),
            live_stats=snap.live_stats,
            k1=BM25_K1 if k1 is None else k1,
            b=BM25_B if b is None else b,
            weights=None if weights is None else [weights[i] for _, i in known],
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
        snap = self._snap
        if snap is None:
            self._layout += 1
            snap = self._load_cache() or empty_snapshot(self.dim, self._db.uuid)
        rows_gen = self._db.rows_generation(conn)
        if snap.generation >= 0 and rows_gen is not None and rows_gen <= snap.generation:
            # only vectors were filled since: no row id scan, just the filled rows
            self._snap = snap = self._fill(snap, gen)
            self._graph.maybe_kick(snap)
            return snap
        alive = live_mask(snap.rowids, self._db.rowids(conn))
        dead = int(snap.n - np.count_nonzero(alive))
        if dead >= _COMPACT_MIN_DEAD and dead > _COMPACT_DEAD_SHARE * max(snap.n, 1):
            log.info("compacting embedded store %s (%d dead rows)", self.path, dead)
            self._hnsw = None
            self._layout += 1
            snap = empty_snapshot(self.dim, self._db.uuid)
            alive = np.zeros(0, bool)
        snap = self._append(snap, alive, gen)
        self._snap = snap
        # the graph (and, for a large store, the cache) is built after writes settle, never here
        from zhiwen.store import _vectors

        if snap.n >= _vectors.HNSW_MIN_ROWS and self._saved_generation < 0:
            self._graph.kick()  # a large store never saved: save it once writes settle
        else:
            self._graph.maybe_kick(snap)
        return snap

    def _append(self, snap: Snapshot, alive: np.ndarray, gen: int) -> Snapshot:
        """``snap`` with tombstones ``alive``, the vectors filled since it was taken, and every
        database row past its last row id appended."""
        if snap.n and self.dim:
            snap = self._fill(snap, snap.generation)  # before the append: only rows it already had
        rows = self._db.rows_after(self._db.wconn, snap.max_rowid)
        new = append_rows(snap, alive, rows, generation=gen, dim=self.dim)
        return dataclasses.replace(new, vectors=self._with_hnsw(new.vectors))

    def _fill(self, snap: Snapshot, gen: int) -> Snapshot:
        """``snap`` with the vectors filled since it was taken (its rows are unchanged)."""
        filled = self._db.filled_since(self._db.wconn, snap.generation, snap.max_rowid)
        vectors = snap.vectors
        if filled and vectors is not None:
            vectors, positions = fill_vectors(vectors, snap.rowids, filled)
            if self._hnsw is not None:
                self._hnsw.uncover(positions)
        return dataclasses.replace(snap, vectors=self._with_hnsw(vectors), generation=gen)

    def _with_hnsw(self, vectors: VectorIndex | None) -> VectorIndex | None:
        """``vectors`` with the store's HNSW graph, when it has one (built by :class:`GraphBuilder`)."""
        if vectors is None:
            return None
        return VectorIndex(vectors.matrix, vectors.has_vec, self._hnsw)

    # -- the background graph (GraphHost for GraphBuilder) -------------------------------------------
    @property
    def graph(self) -> HNSW | None:
        return self._hnsw

    def generation(self) -> int:
        return self._db.generation()

    def graph_snapshot(self) -> tuple[Snapshot, int]:
        with self._db.lock:
            return self._snapshot(), self._layout

    def install_graph(self, hnsw: HNSW, layout: int, generation: int) -> bool:
        """Swap in a graph built from the snapshot of ``generation`` and row layout ``layout``;
        False (and unused) when the rows were renumbered since."""
        with self._db.lock:
            snap = self._snap
            if self._db.closed or layout != self._layout or snap is None or snap.vectors is None:
                return False
            # vectors replaced after that snapshot: the new graph holds their old value
            with self._db.consistent_read() as conn:
                changed = self._db.filled_since(conn, generation, snap.max_rowid)
            if changed:
                wanted = np.fromiter((r for r, _ in changed), np.int64, len(changed))
                pos = np.searchsorted(snap.rowids, wanted)
                hnsw.uncover(pos[pos < snap.n])
            self._hnsw = hnsw
            vectors = VectorIndex(snap.vectors.matrix, snap.vectors.has_vec, hnsw)
            self._snap = dataclasses.replace(snap, vectors=vectors)
            return True

    # -- the on-disk cache of the index ---------------------------------------------------------------
    def _cache_key(self, snap: Snapshot) -> tuple[int, ...]:
        graph = snap.vectors.hnsw if snap.vectors is not None else None
        if graph is None:
            return (snap.generation, self._layout)
        return (snap.generation, self._layout, id(graph), graph.size, int(np.count_nonzero(graph.covered)))

    def _save_cache(self, snap: Snapshot) -> None:
        key = self._cache_key(snap)
        graph = snap.vectors.hnsw if snap.vectors is not None else None
        if self._cache.save(snap, graph):
            self._saved_generation = snap.generation
            self._saved_key = key

    def _load_cache(self) -> Snapshot | None:
        loaded = self._cache.load(db_uuid=self._db.uuid, dim=self.dim)
        if loaded is None:
            return None
        snap, self._hnsw = loaded
        self._saved_generation = snap.generation
        # BM25 statistics are derived, not saved: a sync that only fills vectors keeps them
        live_stats = snap.bm25.live_stats(snap.alive)
        snap = dataclasses.replace(snap, vectors=self._with_hnsw(snap.vectors), live_stats=live_stats)
        self._saved_key = self._cache_key(snap)
        return snap

    def flush(self) -> None:
        """Bring the search index up to date and save it (with its graph) when it changed.

        ``close()`` does this too. The save runs outside the store lock (the snapshot is
        immutable), so searches and writes go on meanwhile; saves are serialised.
        """
        snap = self._snapshot()
        with self._save_lock:
            if snap.n and self._cache_key(snap) != self._saved_key:
                self._save_cache(snap)

    persist = flush  # GraphHost: save after a graph build

    @property
    def saved_once(self) -> bool:
        return self._saved_generation >= 0

    def close(self) -> None:
        if self._db.closed:
            return
        self._graph.stop()
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
