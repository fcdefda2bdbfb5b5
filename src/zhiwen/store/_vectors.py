"""Cosine nearest neighbours for the embedded store: exact numpy, plus faiss HNSW when large.

Rows are L2-normalised float32, so cosine is an inner product. Strategy (picked by
``bench/bench_store.py``; numbers in the store docs):

* store under 20k rows, or a filter leaving at most 2k rows: exact scan — contiguous
  (``einsum`` over every row, disallowed rows masked) or, when few rows are allowed, over the
  gathered allowed rows; correct by construction;
* otherwise, once the store has a graph: faiss HNSW with the allowed rows (filter ∧ live ∧
  has-vector ∧ covered by the graph) as a bitmap that the graph walk itself respects, so a
  filter never needs over-fetching; rows the graph does not cover yet (appended or filled after
  it was built, at most 2k) are scored exactly beside it; candidates are re-scored exactly in
  float32, and if fewer than ``k`` come back the exact scan answers.

The graph is built and grown off the search path (:mod:`zhiwen.store._embedded_graph`); HNSW
mutation (adds) and searches are serialised by a lock.

Example::

    vi = VectorIndex(np.eye(4, dtype=np.float32), np.ones(4, bool))
    vi.top_k(np.array([1, 0, 0, 0], np.float32), k=2, allowed=np.ones(4, bool))
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

HNSW_MIN_ROWS = 20_000  # below this an exact scan takes ~5 ms or less (bench_store.py)
EXACT_MAX_ROWS = 2_000  # filters leaving at most this many rows: exact gather, ~3 ms
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 96
HNSW_EF_MAX = 1024
_GATHER_RATIO = 6  # gathering a row costs ~6 contiguous rows
_BLOCK = 1024
_EMPTY_I = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float32)


def normalize_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def _gathered_dot(matrix: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix[rows] @ query`` in blocks, so the temporary copy stays small."""
    out = np.empty(len(rows), np.float32)
    buf = np.empty((min(len(rows), _BLOCK), matrix.shape[1]), np.float32)
    for i in range(0, len(rows), _BLOCK):
        idx = rows[i : i + _BLOCK]
        block = buf[: len(idx)]
        np.take(matrix, idx, axis=0, out=block)
        np.einsum("ij,j->i", block, query, out=out[i : i + len(idx)])
    return out


def exact_top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top-k over the rows where ``allowed`` (all when None), best first.

    A contiguous scan costs ~0.25 µs per 384-dim row here, a gather of scattered rows ~1.5 µs
    (bench_store.py, 2 busy cores), so the allowed rows are gathered only when they are few.
    """
    n = len(matrix)
    if allowed is None or np.count_nonzero(allowed) * _GATHER_RATIO > n:
        # einsum, not ``@``: no BLAS thread pool to oversubscribe (the default pool was 10-30x
        # slower on 2 busy cores)
        sims = np.einsum("ij,j->i", matrix, query)
        if allowed is not None:
            sims[~allowed] = -np.inf
            k = min(k, int(np.count_nonzero(allowed)))
        cand = None
    else:
        rows = np.flatnonzero(allowed)
        if not len(rows):
            return _EMPTY_I, _EMPTY_F
        sims = _gathered_dot(matrix, rows, query)
        cand = rows
    if k <= 0:
        return _EMPTY_I, _EMPTY_F
    part = np.argpartition(-sims, k - 1)[:k] if len(sims) > k else np.arange(len(sims))
    top = part[np.lexsort((part, -sims[part]))]
    pos = top if cand is None else cand[top]
    return pos.astype(np.int32), sims[top].astype(np.float32)


@dataclass(slots=True)
class HNSW:
    """A faiss HNSW graph whose ids are row positions, shared by successive snapshots.

    Append-only: rows without a vector are added as zero vectors so that faiss ids stay equal
    to row positions; the allowed-rows bitmap of every search excludes them (and tombstones).
    ``covered[i]`` says row ``i`` had its vector when it was added: a row whose vector came
    (or changed) later is not trusted in the graph, and searches score it exactly instead
    (:meth:`VectorIndex.top_k`) until a rebuild covers it.
    faiss filters *inside* the graph walk (``IDSelectorBitmap``), so a filter keeps ~k results
    without asking for k / selectivity neighbours (post-filtering HNSW libraries must over-fetch).
    """

    index: Any
    covered: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, dim: int) -> HNSW:
        import faiss

        index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return cls(index)

    @classmethod
    def load(cls, path: Path, covered: np.ndarray | None = None) -> HNSW:
        import faiss

        index = faiss.read_index(str(path))
        if covered is None or len(covered) != index.ntotal:
            covered = np.ones(index.ntotal, bool)
        return cls(index, np.asarray(covered, bool))

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def add(self, matrix: np.ndarray, upto: int, has_vec: np.ndarray | None = None) -> None:
        """Add rows ``self.size..upto`` (build threads: 2; searches use 1, see :meth:`search`).

        One call holds the lock for its whole add: callers that must not block searches for
        long add in steps (:func:`grow_graph`).
        """
        import faiss

        with self.lock:
            start = self.size
            if upto > start:
                faiss.omp_set_num_threads(2)
                try:
                    self.index.add(np.ascontiguousarray(matrix[start:upto]))
                finally:
                    faiss.omp_set_num_threads(1)
                new = np.ones(upto - start, bool) if has_vec is None else has_vec[start:upto]
                self.covered = np.concatenate([self.covered[:start], new])

    def uncover(self, positions: np.ndarray) -> None:
        """Rows whose vector changed after they were added: searched exactly from now on."""
        with self.lock:
            inside = positions[positions < len(self.covered)]
            if len(inside) and self.covered[inside].any():
                covered = self.covered.copy()
                covered[inside] = False
                self.covered = covered

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray, ef: int) -> np.ndarray:
        """Row positions of up to ``k`` nearest allowed rows (order not guaranteed exact)."""
        import faiss

        with self.lock:
            # the graph may have grown past an older snapshot's rows since it was taken: those
            # rows are not allowed, and the bitmap must cover every id the walk can visit
            size = self.size
            bits = np.zeros(size, bool)
            upto = min(size, len(allowed))
            bits[:upto] = allowed[:upto]
            bitmap = np.packbits(bits, bitorder="little")
            sel = faiss.IDSelectorBitmap(size, faiss.swig_ptr(bitmap))
            params = faiss.SearchParametersHNSW(sel=sel, efSearch=ef)  # type: ignore[attr-defined]
            _, ids = self.index.search(query.reshape(1, -1), k, params=params)
        ids = ids[0]
        return ids[ids >= 0].astype(np.int64)

    def save(self, path: Path) -> np.ndarray:
        """Write the graph; returns the ``covered`` mask that goes with the written graph."""
        import faiss

        with self.lock:
            faiss.write_index(self.index, str(path))
            return self.covered.copy()


@dataclass(frozen=True, slots=True)
class VectorIndex:
    """Row-aligned normalised vectors (zero rows where a chunk has none) and an optional HNSW."""

    matrix: np.ndarray  # float32 (n, dim)
    has_vec: np.ndarray  # bool (n,)
    hnsw: HNSW | None = None

    def graph_rows(self, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``ok`` split into (rows the graph covers, rows it does not: new, or filled later)."""
        hnsw = self.hnsw
        in_graph = np.zeros(len(ok), bool)
        if hnsw is not None:
            covered = hnsw.covered  # read once: growth replaces the array, never edits it
            m = min(len(covered), len(ok))
            in_graph[:m] = ok[:m] & covered[:m]
        return in_graph, ok & ~in_graph

    def uncovered_count(self) -> int:
        """Rows with a vector that the graph does not cover (all of them without a graph)."""
        return int(np.count_nonzero(self.graph_rows(self.has_vec)[1]))

    def top_k(self, query: np.ndarray, k: int, *, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best ``k`` rows among ``allowed`` (alive ∧ filter); ``query`` already normalised.

        Exact unless the graph covers all but a few (≤ ``EXACT_MAX_ROWS``) of the rows asked
        for: then the graph's candidates plus those few rows, all re-scored exactly.
        """
        ok = allowed & self.has_vec
        n_ok = int(np.count_nonzero(ok))
        if n_ok == 0 or k <= 0:
            return _EMPTY_I, _EMPTY_F
        k = min(k, n_ok)
        hnsw = self.hnsw
        n = len(ok)
        if hnsw is None or n_ok <= EXACT_MAX_ROWS:
            return exact_top_k(self.matrix, query, k, None if n_ok == n else ok)
        in_graph, rest = self.graph_rows(ok)
        n_graph = int(np.count_nonzero(in_graph))
        rest_rows = np.flatnonzero(rest)
        if len(rest_rows) > EXACT_MAX_ROWS or n_graph == 0:
            return exact_top_k(self.matrix, query, k, None if n_ok == n else ok)
        # selective filters make the walk skip more nodes: widen the beam with the selectivity
        ef = min(HNSW_EF_MAX, int(max(HNSW_EF_SEARCH, k) * math.sqrt(n / n_graph)))
        keys = hnsw.search(query, min(k, n_graph), in_graph, ef)
        if len(keys) < min(k, n_graph):
            log.debug("HNSW returned %d/%d allowed rows; exact fallback", len(keys), k)
            return exact_top_k(self.matrix, query, k, ok)
        if len(rest_rows):
            keys = np.concatenate([keys, rest_rows])
        # exact float32 scores, so both paths rank on the same scale
        sims = np.einsum("ij,j->i", np.take(self.matrix, keys, axis=0), query)
        order = np.lexsort((keys, -sims))[:k]
        return keys[order].astype(np.int32), sims[order]
