"""BM25 over term-major postings, scored at query time with vectorised numpy.

Raw term frequencies are stored (not precomputed BM25 weights, as bm25s does), so the global
statistics (N, document frequency, average length) are taken over the *live* rows at query
time: deletes are tombstones and appends are a new segment, and neither needs a rebuild.
A query does one gather + multiply-add per query term over that term's postings (a few
hundred µs for a common term at 100k chunks); there is no Python loop per document.

Scores are Lucene's BM25, ``idf · tf / (tf + k1 · (1 - b + b · dl / avgdl))`` with
``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` (always positive; no ``(k1 + 1)`` factor, which
does not change the ranking), k1 = 1.5, b = 0.75 — the numbers bm25s' default ``method="lucene"``
gives, checked in ``tests/store/test_embedded.py``. Both can be set per query (a KB's tuned
values, ``zhiwen tune``), and query terms may carry weights (pseudo-relevance feedback's
expanded query: ``Σ_t w_t · bm25(t, d)``; without weights every distinct term counts once).

Example::

    seg = Postings.build(rows=np.array([0, 0, 1]), terms=np.array([3, 5, 3]), tfs=np.array([1, 2, 1]))
    bm25 = BM25Index((seg,), lengths=np.array([3.0, 1.0], np.float32))
    bm25.top_k([3], k=10, alive=np.ones(2, bool))     # (positions, scores), best first
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

K1 = 1.5
B = 0.75


@dataclass(frozen=True, slots=True)
class Postings:
    """For term ``t``: rows ``rows[indptr[t]:indptr[t+1]]`` with frequencies ``tfs[...]``."""

    indptr: np.ndarray  # int64, n_terms + 1
    rows: np.ndarray  # int32, global row positions
    tfs: np.ndarray  # float32

    @classmethod
    def build(cls, rows: np.ndarray, terms: np.ndarray, tfs: np.ndarray) -> Postings:
        """From COO triples (one per distinct term of a row); scipy's CSC conversion is a counting sort."""
        if len(rows) == 0:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32))
        n_rows = int(rows.max()) + 1
        n_terms = int(terms.max()) + 1
        m = sp.csc_matrix(
            (tfs.astype(np.float32), (rows.astype(np.int64), terms.astype(np.int64))),
            shape=(n_rows, n_terms),
        )
        m.sort_indices()
        return cls(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data.astype(np.float32))

    @property
    def n_terms(self) -> int:
        return len(self.indptr) - 1

    def nnz(self) -> int:
        return len(self.rows)

    def term(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        if t >= self.n_terms:
            return _EMPTY_I, _EMPTY_F
        a, b = self.indptr[t], self.indptr[t + 1]
        return self.rows[a:b], self.tfs[a:b]

    def to_coo(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        terms = np.repeat(np.arange(self.n_terms, dtype=np.int32), np.diff(self.indptr))
        return self.rows, terms, self.tfs

    @classmethod
    def merge(cls, segments: Sequence[Postings]) -> Postings:
        parts = [s.to_coo() for s in segments if s.nnz()]
        if not parts:
            return cls.build(_EMPTY_I, _EMPTY_I, _EMPTY_F)
        return cls.build(*(np.concatenate(p) for p in zip(*parts, strict=True)))


_EMPTY_I = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float32)


def term_weights(terms: Sequence[int], weights: Sequence[float] | None) -> dict[int, float]:
    """Distinct terms in order → weight: 1.0 each without ``weights``, else repeats summed."""
    if weights is None:
        return dict.fromkeys(terms, 1.0)
    if len(weights) != len(terms):
        raise ValueError(f"{len(weights)} weights for {len(terms)} terms")
    out: dict[int, float] = {}
    for t, w in zip(terms, weights, strict=True):
        out[t] = out.get(t, 0.0) + float(w)
    return out


def check_bm25_params(k1: float, b: float) -> None:
    """k1 ≥ 0 and 0 ≤ b ≤ 1 (a KB's tuned values are checked before a search uses them)."""
    if not (np.isfinite(k1) and k1 >= 0 and np.isfinite(b) and 0.0 <= b <= 1.0):
        raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")


@dataclass(frozen=True, slots=True)
class BM25Index:
    """Postings segments over rows ``0..len(lengths)`` plus each row's token count."""

    segments: tuple[Postings, ...]
    lengths: np.ndarray  # float32 per row

    def live_stats(self, alive: np.ndarray) -> tuple[int, float]:
        """(number of live rows, their average length)."""
        live_lengths = self.lengths[alive]
        if not len(live_lengths):
            return 0, 1.0
        return len(live_lengths), float(live_lengths.mean()) or 1.0

    def top_k(
        self,
        term_ids: Sequence[int],
        k: int,
        *,
        alive: np.ndarray,
        allowed: np.ndarray | None = None,
        k1: float = K1,
        b: float = B,
        live_stats: tuple[int, float] | None = None,
        weights: Sequence[float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Best ``k`` rows with a positive score among ``allowed`` (a subset of ``alive``).

        ``alive`` defines the collection statistics (N, df, avgdl); ``allowed`` (the metadata
        filter, already AND-ed with ``alive``) only decides which rows may be returned.
        ``live_stats`` is :meth:`live_stats` cached by the caller. ``weights`` (one per entry of
        ``term_ids``; a repeated term adds its weights up) scale each term's contribution.
        """
        n = len(self.lengths)
        n_live, avgdl = live_stats if live_stats is not None else self.live_stats(alive)
        if n_live == 0 or k <= 0 or not term_ids:
            return _EMPTY_I, _EMPTY_F
        keep = alive if allowed is None else allowed
        acc = np.zeros(n, np.float32)
        touched = False
        for t, weight in term_weights(term_ids, weights).items():
            if weight <= 0:
                continue
            parts = [seg.term(t) for seg in self.segments]
            rows = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
            if not len(rows):
                continue
            tfs = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
            live = alive[rows]
            df = int(np.count_nonzero(live))
            if df == 0:
                continue
            idf = np.float32(np.log1p((n_live - df + 0.5) / (df + 0.5)))
            sel = keep[rows]
            rows, tfs = rows[sel], tfs[sel]
            if not len(rows):
                continue
            norm = (k1 * (1.0 - b)) + (k1 * b / avgdl) * self.lengths[rows]
            acc[rows] += (idf * np.float32(weight)) * tfs / (tfs + norm)
            touched = True
        if not touched:
            return _EMPTY_I, _EMPTY_F
        cand = np.flatnonzero(acc > 0)
        scores = acc[cand]
        if len(cand) > k:
            part = np.argpartition(-scores, k - 1)[:k]
            cand, scores = cand[part], scores[part]
        order = np.lexsort((cand, -scores))  # score desc, then row asc: deterministic ties
        return cand[order].astype(np.int32), scores[order]
