"""Cosine nearest neighbours for the embedded store: exact numpy, plus usearch HNSW when large.

Rows are L2-normalised float32, so cosine is an inner product. Search strategy (picked by
``bench/bench_store.py``, numbers in the store docs):

* small store, or a filter that leaves few rows: exact ``matrix[rows] @ q`` over only the
  allowed rows — correct by construction, a few ms for ~20k rows;
* otherwise: HNSW (usearch, keys = row positions) asked for enough extra neighbours to survive
  the filter and the tombstones, then post-filtered; if that still leaves fewer than ``k``
  rows, fall back to exact search over the allowed rows, so a filter never loses matches.

HNSW mutation (adds) and search are serialised by a lock: usearch may grow its storage on add,
which must not race a search.

Example::

    vi = VectorIndex.build(np.eye(4, dtype=np.float32))
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

HNSW_MIN_ROWS = 20_000  # below this exact search is as fast as HNSW (bench_store.py)
EXACT_MAX_ROWS = 20_000  # filtered searches over at most this many rows go exact
_EMPTY_I = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float32)


def normalize_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def exact_top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top-k over ``rows`` (all rows when None); positions, scores best first."""
    # einsum, not ``@``: no BLAS thread pool to oversubscribe (bench_store.py: a 1-thread
    # BLAS sgemv was slower still, and the default pool 10x slower on 2 busy cores)
    if rows is None:
        sims = np.einsum("ij,j->i", matrix, query)
        cand = None
    else:
        if not len(rows):
            return _EMPTY_I, _EMPTY_F
        sims = np.einsum("ij,j->i", np.take(matrix, rows, axis=0), query)
        cand = rows
    part = np.argpartition(-sims, k - 1)[:k] if len(sims) > k else np.arange(len(sims))
    top = part[np.lexsort((part, -sims[part]))]
    pos = top if cand is None else cand[top]
    return pos.astype(np.int32), sims[top].astype(np.float32)


@dataclass(slots=True)
class HNSW:
    """A usearch index keyed by row position, shared by successive snapshots (append-only)."""

    index: Any
    size: int  # rows 0..size-1 have been added (rows without a vector are simply absent)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, dim: int) -> HNSW:
        from usearch.index import Index

        # f16 storage halves memory; connectivity/expansion measured in bench_store.py
        index = Index(
            ndim=dim, metric="ip", dtype="f16", connectivity=16, expansion_add=64, expansion_search=96
        )
        return cls(index, 0)

    @classmethod
    def load(cls, path: Path, dim: int, size: int) -> HNSW:
        hnsw = cls.create(dim)
        hnsw.index.load(str(path))
        hnsw.size = size
        return hnsw

    def add(self, matrix: np.ndarray, has_vec: np.ndarray, upto: int) -> None:
        """Add rows ``self.size..upto`` that have a vector."""
        with self.lock:
            rows = np.flatnonzero(has_vec[self.size : upto]) + self.size
            if len(rows):
                self.index.add(rows.astype(np.uint64), matrix[rows], threads=2)
            self.size = max(self.size, upto)

    def search(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            m = self.index.search(query, count, threads=1)
        keys = np.asarray(m.keys, dtype=np.int64)
        return keys, 1.0 - np.asarray(m.distances, dtype=np.float32)

    def save(self, path: Path) -> None:
        with self.lock:
            self.index.save(str(path))


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
            rows = None if n_ok == n else np.flatnonzero(ok)
            return exact_top_k(self.matrix, query, k, rows)
        # ask for enough neighbours that ~k survive the filter/tombstones, with 2x headroom
        count = min(n, max(2 * k, math.ceil(2 * k * n / n_ok)) + 16)
        keys, sims = hnsw.search(query, count)
        keys_ok = (keys >= 0) & (keys < n)
        keys, sims = keys[keys_ok], sims[keys_ok]
        keep = ok[keys]
        keys = keys[keep]
        if len(keys) < k:
            log.debug("HNSW returned %d/%d allowed rows; exact fallback", len(keys), k)
            return exact_top_k(self.matrix, query, k, np.flatnonzero(ok))
        # exact float32 scores for the survivors (HNSW stores f16): same scale as the exact path
        sims = np.einsum("ij,j->i", np.take(self.matrix, keys, axis=0), query)
        order = np.lexsort((keys, -sims))[:k]
        return keys[order].astype(np.int32), sims[order]
