"""The PostgreSQL store's two searches: exact Okapi BM25 over posting blocks, and pgvector HNSW.

BM25 is Lucene's (idf ``log(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.5, b = 0.75, times
``k1 + 1``), the embedded backend's ranking: repeated query tokens count once, statistics (N,
df, avgdl) are over all chunks, the filter only decides which chunks may be returned.

A query reads ``stats`` and the posting blocks of its terms (:mod:`zhiwen.store._pg_postings`,
~12 bytes per posting, 128 per row), scores every posting in numpy (tens of ns each: a term in
half of 100k chunks costs ~1 ms) and maps the best rids to chunk ids in one indexed lookup. A
metadata filter is checked on the best-scoring candidates first (one indexed lookup), and only
when too few of them pass on all of them. Block-max and MaxScore/NRA pruning were simulated on
the 100k statute benchmark: at the hybrid retriever's k = 100 they skip < 4 % of the postings
(short chunks, many mid-frequency terms per query), so every posting of the query's terms is
scored, with no round trip per block.

The dense branch is ``ORDER BY embedding <=> q LIMIT k`` on ``vectors`` (HNSW, cosine), the
filter a ``WHERE`` on the metadata copied there; pgvector ≥ 0.8's iterative scan keeps walking
the graph until k rows pass it.

Example::

    with pool.connection() as conn:
        bm25_search(conn, layout, ["宫保", "鸡丁"], 10, parse_filters({"difficulty": {"lte": 2}}))
        vector_search(conn, layout, query_vec, 10, None, ef_search=settings.hnsw_ef_search)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from zhiwen.store._pg_filters import filter_sql
from zhiwen.store._pg_postings import Postings, fetch_postings, indexable
from zhiwen.store._pg_schema import HNSW_MAX_EF, KBSchema
from zhiwen.store.base import Scored
from zhiwen.store.filters import Filter

BM25_K1 = 1.5
BM25_B = 0.75
# a filtered query first checks this many times k of its best candidates against the filter
_FILTER_FIRST_CHECK = 8


def searchable(token: str) -> bool:
    """Whether ``token`` can match: it has postings when it is non-empty and short enough."""
    return indexable(token)


def bm25_scores(
    postings: dict[str, Postings],
    n: float,
    avgdl: float,
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
    weights: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rids, scores) of every chunk with a positive BM25 score for the query terms ``postings``.

    ``weights`` (term → weight, default 1) scale each term: pseudo-relevance feedback's query.
    """
    c0, c1 = k1 * (1 - b), k1 * b / avgdl
    all_rids, contribs = [], []
    for term, (rids, tfs, dls) in postings.items():
        qw = 1.0 if weights is None else weights.get(term, 0.0)
        if qw <= 0:
            continue
        df = len(rids)
        w = math.log1p((n - df + 0.5) / (df + 0.5)) * (k1 + 1) * qw
        tf = tfs.astype(np.float64)
        all_rids.append(rids)
        contribs.append(w * tf / (tf + c0 + c1 * dls))
    if not all_rids:
        return np.zeros(0, np.int64), np.zeros(0)
    rids = np.concatenate(all_rids).astype(np.int64)
    contrib = np.concatenate(contribs)
    top = int(rids.max()) + 1
    if top <= 8 * len(rids) + 65536:  # dense accumulator: rids are compact
        acc = np.bincount(rids, weights=contrib, minlength=top)
        cand = np.flatnonzero(acc > 0)
        return cand, acc[cand]
    cand, inverse = np.unique(rids, return_inverse=True)
    return cand, np.bincount(inverse, weights=contrib)


def _best(rids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best (plus ties with the k-th), best first."""
    if len(rids) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        rids, scores = rids[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")
    return rids[order], scores[order]


def _ids(
    conn: psycopg.Connection[Any], layout: KBSchema, rids: np.ndarray, filters: Filter | None
) -> dict[int, str]:
    """rid → chunk id for the ``rids`` that exist and pass ``filters``."""
    where, fparams = filter_sql(filters)
    rows = conn.execute(
        sql.SQL("SELECT rid, id FROM {} WHERE rid = ANY(%s) AND ({})").format(layout.table("chunks"), where),
        [rids.astype(np.int32).tolist(), *fparams],
    ).fetchall()
    return {int(r[0]): r[1] for r in rows}


def bm25_search(
    conn: psycopg.Connection[Any],
    layout: KBSchema,
    tokens: Sequence[str],
    k: int,
    filters: Filter | None,
    *,
    k1: float | None = None,
    b: float | None = None,
    weights: Sequence[float] | None = None,
) -> Scored:
    """Top ``k`` chunks by exact BM25 among those matching ``filters`` (see module docstring).

    ``k1``/``b`` override the defaults; ``weights`` (one per token, repeats summed) scale terms.
    """
    terms = list(dict.fromkeys(t for t in tokens if searchable(t)))
    if not terms or k <= 0:
        return []
    term_w: dict[str, float] | None = None
    if weights is not None:
        term_w = {}
        for t, w in zip(tokens, weights, strict=True):
            term_w[t] = term_w.get(t, 0.0) + float(w)
    n, total_len, postings = fetch_postings(conn, layout, terms)
    if not n or not postings:
        return []
    rids, scores = bm25_scores(
        postings,
        float(n),
        max(total_len / n, 1e-9),
        k1=BM25_K1 if k1 is None else k1,
        b=BM25_B if b is None else b,
        weights=term_w,
    )
    if not len(rids):
        return []
    order = np.argsort(-scores, kind="stable") if filters else None
    if order is None:
        rids, scores = _best(rids, scores, k)
        ids = _ids(conn, layout, rids, None)
    else:
        cut = min(len(order), _FILTER_FIRST_CHECK * k)
        # the first batch ends after the last candidate tied with its last one
        first = order[: int(np.count_nonzero(scores >= scores[order[cut - 1]]))]
        ids = _ids(conn, layout, rids[first], filters)
        # enough of the best candidates pass: nothing further down can beat the k-th of them
        if len(ids) < k and len(first) < len(order):
            ids.update(_ids(conn, layout, rids[order[len(first) :]], filters))
        rids, scores = rids[order], scores[order]
    hits = [(ids[r], float(s)) for r, s in zip(rids.tolist(), scores.tolist(), strict=True) if r in ids]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits[:k]


def vector_search(
    conn: psycopg.Connection[Any],
    layout: KBSchema,
    vector: np.ndarray,
    k: int,
    filters: Filter | None,
    *,
    ef_search: int,
) -> Scored:
    """HNSW cosine search among chunks matching ``filters``; score = 1 - cosine distance.

    ``ef_search`` is the session's beam width; a larger ``k`` widens it for this transaction.
    """
    where, fparams = filter_sql(filters)
    query = sql.SQL(
        "SELECT id, embedding <=> %s AS dist FROM {vectors} WHERE ({where}) "
        "ORDER BY embedding <=> %s LIMIT %s"
    ).format(vectors=layout.table("vectors"), where=where)
    if k > ef_search:
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(k, HNSW_MAX_EF)),))
    rows = conn.execute(query, [vector, *fparams, vector, int(k)]).fetchall()
    # iterative scans may return rows slightly out of order
    return sorted(((r[0], 1.0 - float(r[1])) for r in rows), key=lambda h: (-h[1], h[0]))
