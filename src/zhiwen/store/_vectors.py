"""Cosine nearest neighbours for the embedded store: exact numpy, plus faiss HNSW when large.

Rows are L2-normalised float32, so cosine is an inner product. Strategy (picked by
``bench/bench_store.py``; numbers in the store docs):

* store under 20k rows, or a filter leaving at most 2k rows: exact scan — contiguous
  (``einsum`` over every row, disallowed rows masked) or, when few rows are allowed, over the
  gathered allowed rows; correct by construction;
* otherwise: faiss HNSW with the allowed rows (filter ∧ live ∧ has-vector) as a bitmap that
  the graph walk itself respects, so a filter never needs over-fetching; candidates are
  re-scored exactly in float32, and if fewer than ``k`` come back the exact scan answers.

HNSW mutation (adds) and searches are serialised by a lock.

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
    faiss filters *inside* the graph walk (``IDSelectorBitmap``), so a filter keeps ~k results
    without asking for k / selectivity neighbours (post-filtering HNSW libraries must over-fetch).
    """

    index: Any
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, dim: int) -> HNSW:
        import faiss

        index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return cls(index)

    @classmethod
    def load(cls, path: Path) -> HNSW:
        import faiss

        return cls(faiss.read_index(str(path)))

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def add(self, matrix: np.ndarray, upto: int) -> None:
        """Add rows ``self.size..upto`` (build threads: 2; searches use 1, see :meth:`search`)."""
        import faiss

        with self.lock:
            if upto > self.size:
                faiss.omp_set_num_threads(2)
                try:
                    self.index.add(np.ascontiguousarray(matrix[self.size : upto]))
                finally:
                    faiss.omp_set_num_threads(1)

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

    def save(self, path: Path) -> None:
        import faiss

        with self.lock:
            faiss.write_index(self.index, str(path))


@dataclass(frozen=True, slots=True)
class VectorIndex:
    """Row-aligned normalised vectors (zero rows where a chunk has none) and an optional HNSW."""

    matrix: np.ndarray  # float32 (n, dim)
    has_vec: np.ndarray  # bool (n,)
    hnsw: HNSW | None = None

    def top_k(self, query: np.ndarray, k: int, *, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best ``k`` rows among ``allowed`` (alive ∧ filter); ``query`` already normalised."""
        ok = allowed & self.has_vec
        n_ok = int(np.count_nonzero(ok))
        if n_ok == 0 or k <= 0:
            return _EMPTY_I, _EMPTY_F
        k = min(k, n_ok)
        hnsw = self.hnsw
        n = len(ok)
        if hnsw is None or hnsw.size < n or n_ok <= EXACT_MAX_ROWS:
            return exact_top_k(self.matrix, query, k, None if n_ok == n else ok)
        # selective filters make the walk skip more nodes: widen the beam with the selectivity
        ef = min(HNSW_EF_MAX, int(max(HNSW_EF_SEARCH, k) * math.sqrt(n / n_ok)))
        keys = hnsw.search(query, k, ok, ef)
        if len(keys) < k:
            log.debug("HNSW returned %d/%d allowed rows; exact fallback", len(keys), k)
            return exact_top_k(self.matrix, query, k, ok)
        # exact float32 scores, so both paths rank on the same scale
        sims = np.einsum("ij,j->i", np.take(self.matrix, keys, axis=0), query)
        order = np.lexsort((keys, -sims))[:k]
        return keys[order].astype(np.int32), sims[order]
