"""The PostgreSQL store's two searches: exact Okapi BM25 in SQL, and pgvector HNSW cosine.

Both take the metadata filter as parameterised SQL (:func:`zhiwen.store._pg_filters.filter_sql`)
and run on a connection the caller holds.

BM25 is Lucene's (idf ``log(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.5, b = 0.75), the same
scores as the embedded backend: repeated query tokens count once, statistics (N, df, avgdl)
are over all chunks, the filter only decides which chunks may be returned. Candidates come
from the GIN index on the tsvector (``search_vector @@ 'a' | 'b'``) and scoring costs ~10 µs per
candidate row, so common words (df ≈ N/2 for 应当, 规定 in statutes) would make every query a
near-full scan. MaxScore pruning keeps it exact and cheap: score only the rows containing one
of the *rare* query terms first; a row containing none of them scores at most the sum of the
other terms' upper bounds ``idf·(k1+1)``, so if the k-th score found beats that bound the answer
is complete; otherwise it rescans with just enough of the next-rarest terms (all of them when
fewer than k rows were found).

Example::

    with pool.connection() as conn:
        bm25_search(conn, layout, ["宫保", "鸡丁"], 10, parse_filters({"difficulty": {"lte": 2}}))
        vector_search(conn, layout, query_vec, 10, None, ef_search=settings.hnsw_ef_search)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from zhiwen.store._pg_filters import filter_sql
from zhiwen.store._pg_schema import HNSW_MAX_EF, MAX_LEXEME_BYTES, KBSchema
from zhiwen.store.base import Scored
from zhiwen.store.filters import Filter

BM25_K1 = 1.5
BM25_B = 0.75
# MaxScore pruning: query terms in at most this share of chunks are scored first
_RARE_DF_SHARE = 0.05

# one correlated aggregate per candidate row over the (few) query terms: no GROUP BY, so the
# wide tf column is never sorted (2-3x faster than join + group)
_BM25_SQL = """
    WITH q AS MATERIALIZED (
        SELECT * FROM unnest(%s::text[], %s::double precision[]) AS q(term, w)
    )
    SELECT c.id,
           (SELECT sum(q.w * x.tf / (x.tf + %s + %s * c.dl))
            FROM q CROSS JOIN LATERAL (SELECT (c.tf ->> q.term)::double precision AS tf) x
            WHERE x.tf IS NOT NULL) AS score
    FROM {chunks} c
    WHERE c.search_vector @@ %s::tsquery AND ({where})
    ORDER BY score DESC, c.id
    LIMIT %s
    """


def tsquery_or(tokens: Iterable[str]) -> str:
    """``'a' | 'b'`` with tsquery quoting; the lexemes are taken verbatim (no parser)."""
    quoted = ("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in tokens)
    return " | ".join(quoted)


def searchable(token: str) -> bool:
    """Whether ``token`` is a lexeme of the tsvector (non-empty and short enough)."""
    return bool(token) and len(token.encode("utf-8")) <= MAX_LEXEME_BYTES


def bm25_search(
    conn: psycopg.Connection[Any], layout: KBSchema, tokens: Sequence[str], k: int, filters: Filter | None
) -> Scored:
    """Top ``k`` chunks by exact BM25 among those matching ``filters`` (see module docstring)."""
    terms = list(dict.fromkeys(t for t in tokens if searchable(t)))
    if not terms or k <= 0:
        return []
    where, fparams = filter_sql(filters)
    st = conn.execute(sql.SQL("SELECT n, total_len FROM {} LIMIT 1").format(layout.table("stats"))).fetchone()
    if not st or not st[0]:
        return []
    n, avgdl = float(st[0]), max(float(st[1]) / float(st[0]), 1e-9)
    dfs = dict(
        conn.execute(
            sql.SQL("SELECT term, df FROM {} WHERE term = ANY(%s)").format(layout.table("terms")), (terms,)
        ).fetchall()
    )
    present = sorted((t for t in terms if dfs.get(t, 0) > 0), key=lambda t: (dfs[t], t))
    if not present:
        return []
    weight = {t: math.log1p((n - dfs[t] + 0.5) / (dfs[t] + 0.5)) * (BM25_K1 + 1) for t in present}
    query = sql.SQL(_BM25_SQL).format(chunks=layout.table("chunks"), where=where)
    c0, c1 = BM25_K1 * (1 - BM25_B), BM25_K1 * BM25_B / avgdl
    weights = [weight[t] for t in present]

    def top_rows(prefilter: list[str]) -> list[tuple[Any, ...]]:
        """Top k by BM25 over all terms among the rows containing a ``prefilter`` term."""
        params = [present, weights, c0, c1, tsquery_or(prefilter), *fparams, int(k)]
        return conn.execute(query, params).fetchall()

    rare = [t for t in present if dfs[t] <= _RARE_DF_SHARE * n] or present[:1]
    rows = top_rows(rare)
    if len(rare) < len(present):
        kth = float(rows[-1][1]) if len(rows) >= k else 0.0
        # the true k-th score is ≥ kth, so rows without any term of the smallest prefix whose
        # remaining upper bounds sum below kth cannot make the top k
        needed = len(rare)
        while needed < len(present) and sum(weight[t] for t in present[needed:]) >= kth:
            needed += 1
        if needed > len(rare):
            rows = top_rows(present[:needed])
    return [(r[0], float(r[1])) for r in rows if r[1] is not None and r[1] > 0]


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
        "SELECT id, embedding <=> %s AS dist FROM {chunks} "
        "WHERE embedding IS NOT NULL AND ({where}) ORDER BY embedding <=> %s LIMIT %s"
    ).format(chunks=layout.table("chunks"), where=where)
    if k > ef_search:
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(k, HNSW_MAX_EF)),))
    rows = conn.execute(query, [vector, *fparams, vector, int(k)]).fetchall()
    # iterative scans may return rows slightly out of order
    return sorted(((r[0], 1.0 - float(r[1])) for r in rows), key=lambda h: (-h[1], h[0]))
