"""Reads of the PostgreSQL store that are not searches: chunks, parents, ids, vectors, statistics.

Each function takes a pool connection (autocommit) and the KB's schema layout; the
:class:`~zhiwen.store.postgres.PostgresStore` facade opens the connection.

Example::

    with pool.connection(autocommit=True) as conn:
        chunks = read_chunks(conn, layout, ["a#0", "a#1"])
        ids = read_chunk_ids(conn, layout, ["a"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from zhiwen.documents import Chunk, Document
from zhiwen.store._pg_schema import KBSchema
from zhiwen.store._vectors import normalize_rows


def read_chunks(conn: psycopg.Connection[Any], layout: KBSchema, ids: Sequence[str]) -> list[Chunk]:
    """Chunks in the order of ``ids``; unknown ids are skipped."""
    rows = conn.execute(
        sql.SQL("SELECT id, doc_id, text, title, parent_id, metadata FROM {} WHERE id = ANY(%s)").format(
            layout.table("chunks")
        ),
        (list(ids),),
    ).fetchall()
    by_id = {
        r[0]: Chunk(id=r[0], doc_id=r[1], text=r[2], title=r[3], parent_id=r[4], metadata=r[5]) for r in rows
    }
    return [by_id[i] for i in ids if i in by_id]


def read_parents(conn: psycopg.Connection[Any], layout: KBSchema, ids: Sequence[str]) -> list[Document]:
    rows = conn.execute(
        sql.SQL("SELECT id, text, title, metadata FROM {} WHERE id = ANY(%s)").format(
            layout.table("parents")
        ),
        (list(ids),),
    ).fetchall()
    by_id = {r[0]: Document(id=r[0], text=r[1], title=r[2], metadata=r[3]) for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def read_chunk_ids(
    conn: psycopg.Connection[Any], layout: KBSchema, doc_ids: Sequence[str] | None
) -> list[str]:
    """Chunk ids of ``doc_ids`` (None: all), in rid order."""
    query = sql.SQL("SELECT id FROM {} WHERE %s::text[] IS NULL OR doc_id = ANY(%s) ORDER BY rid").format(
        layout.table("chunks")
    )
    docs = None if doc_ids is None else list(doc_ids)
    return [r[0] for r in conn.execute(query, (docs, docs)).fetchall()]


def read_vectors(
    conn: psycopg.Connection[Any], layout: KBSchema, ids: Sequence[str]
) -> dict[str, np.ndarray]:
    """Stored vectors, L2-normalised float32; ids without a vector are absent."""
    rows = conn.execute(
        sql.SQL("SELECT id, embedding FROM {} WHERE id = ANY(%s)").format(layout.table("vectors")),
        (list(ids),),
    ).fetchall()
    if not rows:
        return {}
    matrix = normalize_rows(np.stack([_as_array(r[1]) for r in rows]))
    return {r[0]: matrix[i] for i, r in enumerate(rows)}


def read_stats(conn: psycopg.Connection[Any], layout: KBSchema) -> tuple[Any, ...]:
    """(chunks, total tokens, vectors, parents, documents, terms, bytes) of the KB's schema."""
    row = conn.execute(
        sql.SQL(
            "SELECT s.n, s.total_len, s.nv, (SELECT count(*) FROM {parents}), "
            "(SELECT count(DISTINCT doc_id) FROM {chunks}), "
            "(SELECT count(DISTINCT term) FROM {postings}), "
            "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            " WHERE c.relnamespace = %s::regnamespace AND c.relkind = 'r') "
            "FROM {stats} s"
        ).format(
            parents=layout.table("parents"),
            chunks=layout.table("chunks"),
            postings=layout.table("postings"),
            stats=layout.table("stats"),
        ),
        (layout.name,),
    ).fetchone()
    assert row is not None
    return tuple(row)


def _as_array(value: Any) -> np.ndarray:
    """A pgvector ``Vector`` (or a plain sequence) as float32."""
    # a third-party value: pgvector's ``Vector`` converts itself, a plain sequence does not
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else value, dtype=np.float32)
