"""Ranking-quality metrics: nDCG@k, Recall@k and MRR@k, vectorised over queries.

The definitions follow BEIR / ``trec_eval`` so numbers are comparable with published ones:

* **nDCG@k** — graded, linear gain ``rel / log2(rank + 1)``; the ideal DCG is computed from the
  qrels (the ``k`` highest grades), not from the retrieved list.
* **Recall@k** — relevant documents (grade > 0) in the top ``k`` divided by *all* relevant ones,
  so a query with more than ``k`` relevant documents cannot reach 1 (RGB-zh: ~8.3 relevant each).
* **MRR@k** — ``1 / rank`` of the first relevant document within the top ``k``, else 0.

A ranking is a list of document ids, best first; repeated ids (several chunks of one passage)
count once, at their first position. Queries without any relevant document score 0 everywhere;
callers normally evaluate only queries that have one.

Example::

    >>> run = {"q1": ["d3", "d1", "d9"]}
    >>> qrels = {"q1": {"d1": 1, "d2": 1}}
    >>> scores = score_run(run, qrels, k=10)
    >>> round(scores.mrr.mean(), 3), round(scores.recall.mean(), 3)
    (0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Qrels = Mapping[str, Mapping[str, int]]


def _discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def gain_matrix(
    rankings: Sequence[Sequence[str]], judgements: Sequence[Mapping[str, int]], k: int
) -> np.ndarray:
    """``(n_queries, k)`` relevance grades of the retrieved documents, 0-padded, duplicates dropped."""
    gains = np.zeros((len(rankings), k), dtype=np.float64)
    for i, (ranking, judged) in enumerate(zip(rankings, judgements, strict=True)):
        seen: set[str] = set()
        col = 0
        for doc_id in ranking:
            if col >= k:
                break
            if doc_id in seen:
                continue
            seen.add(doc_id)
            gains[i, col] = max(0, judged.get(doc_id, 0))
            col += 1
    return gains


def ideal_matrix(judgements: Sequence[Mapping[str, int]], k: int) -> np.ndarray:
    """``(n_queries, k)`` best possible grades per rank, from the qrels."""
    ideal = np.zeros((len(judgements), k), dtype=np.float64)
    for i, judged in enumerate(judgements):
        grades = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
        ideal[i, : len(grades)] = grades
    return ideal


def ndcg(gains: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """Per-query nDCG from :func:`gain_matrix` and :func:`ideal_matrix` of the same ``k``."""
    disc = _discounts(gains.shape[1])
    dcg = gains @ disc
    idcg = ideal @ disc
    out = np.zeros_like(dcg)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def recall(gains: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """Per-query recall: relevant hits in the top k / all relevant documents."""
    hits = (gains > 0).sum(axis=1).astype(np.float64)
    out = np.zeros_like(hits)
    np.divide(hits, n_relevant, out=out, where=n_relevant > 0)
    return out


def mrr(gains: np.ndarray) -> np.ndarray:
    """Per-query reciprocal rank of the first relevant document (0 when none in the top k)."""
    relevant = gains > 0
    first = relevant.argmax(axis=1)
    rr = 1.0 / (first + 1.0)
    return np.where(relevant.any(axis=1), rr, 0.0)


@dataclass(frozen=True, slots=True)
class RunScores:
    """Per-query metric arrays, aligned with ``query_ids``."""

    query_ids: tuple[str, ...]
    k: int
    ndcg: np.ndarray
    recall: np.ndarray
    mrr: np.ndarray

    def means(self) -> dict[str, float]:
        k = self.k
        return {
            f"ndcg@{k}": float(self.ndcg.mean()) if len(self.ndcg) else 0.0,
            f"recall@{k}": float(self.recall.mean()) if len(self.recall) else 0.0,
            f"mrr@{k}": float(self.mrr.mean()) if len(self.mrr) else 0.0,
        }


def score_run(run: Mapping[str, Sequence[str]], qrels: Qrels, k: int = 10) -> RunScores:
    """Score every query of ``run`` (query id → ranked doc ids) against ``qrels``."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    qids = tuple(run)
    judgements = [qrels.get(q, {}) for q in qids]
    gains = gain_matrix([run[q] for q in qids], judgements, k)
    ideal = ideal_matrix(judgements, k)
    n_rel = np.array([sum(1 for g in j.values() if g > 0) for j in judgements], dtype=np.float64)
    return RunScores(qids, k, ndcg(gains, ideal), recall(gains, n_rel), mrr(gains))


def ndcg_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k of one ranking (convenience wrapper over the vectorised form)."""
    return float(ndcg(gain_matrix([ranking], [judged], k), ideal_matrix([judged], k))[0])


def recall_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    n_rel = np.array([sum(1 for g in judged.values() if g > 0)], dtype=np.float64)
    return float(recall(gain_matrix([ranking], [judged], k), n_rel)[0])


def mrr_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    return float(mrr(gain_matrix([ranking], [judged], k))[0])
