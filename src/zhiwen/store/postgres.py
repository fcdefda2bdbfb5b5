"""PostgreSQL + pgvector backend of the store contract (the server backend, behind one setting).

Switch a deployment with ``ZHIWEN_STORE=postgresql://user@host:5432/db``; every knowledge base
then lives in its own schema ``zw_<name>`` of that database (schema version 3):

=============  ==============================================================================
``zw_meta``    key/value: schema version, vector dimension, numeric fields with a range index
``chunks``     id, ``rid`` (integer, insertion order), doc_id, parent_id, title, text,
               ``metadata`` JSONB (GIN ``jsonb_path_ops`` for equality filters + one btree
               expression index per numeric field for ranges), ``tf`` JSONB (token → count)
               and ``dl`` (token count)
``vectors``    id, a copy of ``metadata`` (same indexes) and ``embedding vector(n)`` (HNSW,
               cosine): apart from the text, so BM25 and chunk reads never read vectors; a
               chunk indexed lexical-first has no row here until ``set_vectors``
``postings``   BM25 index: per term, blocks of 128 (rid, tf, dl) packed in one ``bytea``
``parents``    whole parent documents
``stats``      one row: number of chunks, total token count (BM25 avgdl), next rid, number
               of chunks with a vector (``nv``: ``vector_count()`` reads it)
=============  ==============================================================================

Ranking matches the embedded backend: BM25 is *true* Okapi BM25 (Lucene idf, k1=1.5, b=0.75,
as bm25s, times k1 + 1) computed over the posting blocks of the query terms
(:mod:`zhiwen.store._pg_query`); PostgreSQL's ``ts_rank`` is not BM25. The dense branch is
pgvector's HNSW cosine search, score ``1 - distance``. Metadata filters become parameterised SQL
conditions in both branches (:mod:`zhiwen.store._pg_filters`); with pgvector ≥ 0.8
``hnsw.iterative_scan`` keeps filtered vector queries from coming back short.

The parts, one module each: :mod:`zhiwen.store._pg_schema` (DDL, migrations — a schema-1
knowledge base, vectors inline, is upgraded in place when first opened — ``drop_kb``),
:mod:`zhiwen.store._pg_load` (COPY upserts and deletes), :mod:`zhiwen.store._pg_postings` (the
posting blocks), :mod:`zhiwen.store._pg_query` (the two searches), :mod:`zhiwen.store._pg_pool`
(connections), :mod:`zhiwen.store._pg_lock` (the writer lock: a session advisory lock on a
connection of its own); this module is the :class:`~zhiwen.store.base.Store` facade over them.

Writes run in one transaction each (a failed index run leaves the previous content), rows
identical to what is stored are left untouched (re-indexing an unchanged source is a no-op for
the HNSW index), and the connection pool is shared per database and heals itself after an
outage (:mod:`zhiwen.store._pg_pool`); a server that is down gives
:class:`~zhiwen.errors.StoreUnavailable` (code 2002, HTTP 503) with a Chinese message.

Example::

    store = PostgresStore("postgresql://postgres@127.0.0.1:5432/postgres", kb="manual", dim=384)
    store.upsert(chunks, tokens=token_lists, vectors=vectors, parents=docs)
    store.search_text(["宫保", "鸡丁"], k=10, filters=parse_filters({"difficulty": {"lte": 2}}))
    store.close()
    drop_kb("postgresql://postgres@127.0.0.1:5432/postgres", "manual")
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from psycopg import sql

from zhiwen.config import PostgresSettings, get_settings
from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._pg_load import (
    check_vectors,
    delete_chunks,
    fill_vectors,
    rewrite_tokens,
    write_chunks,
    write_parents,
)
from zhiwen.store._pg_lock import AdvisoryWriterLock
from zhiwen.store._pg_pool import SharedPool, acquire_pool, release_pool
from zhiwen.store._pg_query import bm25_search, searchable, vector_search
from zhiwen.store._pg_read import read_chunk_ids, read_chunks, read_parents, read_stats, read_vectors
from zhiwen.store._pg_schema import SCHEMA_VERSION, KBSchema, drop_kb, list_kbs, schema_name, server_features
from zhiwen.store._validate import check_text_options, check_vector_rows
from zhiwen.store._writer_lock import OnWait
from zhiwen.store.base import Scored, StoreFeatures
from zhiwen.store.filters import Filter

__all__ = ["SCHEMA_VERSION", "PostgresStore", "drop_kb", "list_kbs", "schema_name"]

log = logging.getLogger(__name__)


class PostgresStore:
    """One knowledge base in one PostgreSQL schema; see the module docstring."""

    backend = "postgres"
    # the SQL takes k1/b/weights (_pg_query.bm25_search), but searches have always run with the
    # defaults here: offering them would change PostgreSQL's rankings, so they stay off
    features = StoreFeatures(bm25_params=False, term_weights=False, lexical_first=True)

    def __init__(
        self,
        url: str,
        *,
        kb: str,
        dim: int | None,
        settings: PostgresSettings | None = None,
    ) -> None:
        if dim is not None and (not isinstance(dim, int) or dim < 1 or dim > 16000):
            raise InvalidParameter(f"invalid vector dimension {dim!r}", message=f"向量维度无效：{dim}")
        self.url = url
        self.kb = kb
        self.settings = settings or get_settings().postgres
        self.layout = KBSchema(kb, self.settings)
        self.schema = self.layout.name
        self.pgvector_version, session = server_features(url, self.settings)
        self._pool: SharedPool | None = acquire_pool(url, self.settings, session)
        try:
            with self.pool.connection("migrate") as conn:
                self.layout.migrate(conn, dim)
        except BaseException:
            self.close()
            raise

    @property
    def pool(self) -> SharedPool:
        if self._pool is None:
            raise StoreUnavailable("store closed", message="存储已关闭")
        return self._pool

    def _t(self, table: str) -> sql.Identifier:
        return self.layout.table(table)

    # -- contract: properties and reads ---------------------------------------------------
    @property
    def dim(self) -> int | None:
        return self.layout.dim

    def count(self) -> int:
        with self.pool.connection(autocommit=True) as conn:
            row = conn.execute(sql.SQL("SELECT n FROM {}").format(self._t("stats"))).fetchone()
        return int(row[0]) if row else 0

    def vector_count(self) -> int:
        """Chunks with a vector: one row read (``stats.nv``, kept by every write)."""
        if self.dim is None:
            return 0
        with self.pool.connection(autocommit=True) as conn:
            row = conn.execute(sql.SQL("SELECT nv FROM {}").format(self._t("stats"))).fetchone()
        return int(row[0]) if row else 0

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        """Chunks without a vector, in insertion (rid) order."""
        if self.dim is None:
            return []
        query = sql.SQL(
            "SELECT c.id FROM {chunks} c WHERE NOT EXISTS (SELECT 1 FROM {vectors} v WHERE v.id = c.id)"
            " ORDER BY c.rid LIMIT %s"
        ).format(chunks=self._t("chunks"), vectors=self._t("vectors"))
        with self.pool.connection(autocommit=True) as conn:
            rows = conn.execute(query, (None if limit is None else max(0, int(limit)),)).fetchall()
        return [r[0] for r in rows]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors, L2-normalised float32; ids without a vector are absent."""
        if self.dim is None or not ids:
            return {}
        with self.pool.connection(autocommit=True) as conn:
            return read_vectors(conn, self.layout, ids)

    def metadata_fields(self) -> set[str]:
        """Metadata keys with a non-null value, as recorded by writes in ``zw_meta`` (one row read).

        Keys only deleted chunks had stay listed: filtering on them is allowed and matches nothing.
        """
        with self.pool.connection(autocommit=True) as conn:
            return self.layout.metadata_fields(conn)

    def doc_ids(self) -> set[str]:
        with self.pool.connection(autocommit=True) as conn:
            rows = conn.execute(
                sql.SQL("SELECT doc_id FROM {} UNION SELECT id FROM {}").format(
                    self._t("chunks"), self._t("parents")
                )
            ).fetchall()
        return {r[0] for r in rows}

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        if not ids:
            return []
        with self.pool.connection(autocommit=True) as conn:
            return read_chunks(conn, self.layout, ids)

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        if not ids:
            return []
        with self.pool.connection(autocommit=True) as conn:
            return read_parents(conn, self.layout, ids)

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        with self.pool.connection(autocommit=True) as conn:
            return read_chunk_ids(conn, self.layout, doc_ids)

    # -- contract: search (SQL in zhiwen.store._pg_query) ---------------------------------
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
        """Okapi BM25 (Lucene idf, k1=1.5, b=0.75) computed in SQL, exact (MaxScore pruning)."""
        check_text_options(self.features, k1=k1, b=b, weights=weights)
        if k <= 0 or not any(searchable(t) for t in tokens):
            return []
        with self.pool.connection(autocommit=True) as conn:
            return bm25_search(conn, self.layout, tokens, k, filters)

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        """HNSW cosine search; score = 1 - cosine distance."""
        if self.dim is None or k <= 0:
            return []
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise InvalidParameter(
                f"query vector has dim {vec.shape[0]}, store has {self.dim}",
                message=f"查询向量维度 {vec.shape[0]} 与知识库维度 {self.dim} 不一致",
            )
        ef_search = self.settings.hnsw_ef_search
        # a larger k widens the beam for this one transaction; otherwise no BEGIN/COMMIT
        with self.pool.connection(autocommit=k <= ef_search) as conn:
            return vector_search(conn, self.layout, vec, k, filters, ef_search=ef_search)

    # -- contract: writes (SQL in zhiwen.store._pg_load), one transaction each -------------
    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        self._write(chunks, tokens, vectors, parents, replace_docs=True)

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
        keep = {c.id for c in chunks}
        self._write(chunks, tokens, vectors, parents, remove=[i for i in remove if i not in keep])

    def _write(
        self,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None,
        parents: Sequence[Document],
        *,
        replace_docs: bool = False,
        remove: Sequence[str] = (),
    ) -> None:
        chunks = list(chunks)
        _check_tokens(len(chunks), tokens)
        vecs = check_vectors(len(chunks), vectors, self.dim)
        # last occurrence of a repeated id wins, as a sequence of single upserts would
        last = {c.id: i for i, c in enumerate(chunks)}
        order = sorted(last.values())
        if not order and not parents and not remove:
            return
        with self.pool.connection("write") as conn:
            if remove:
                delete_chunks(conn, self.layout, list(remove), [])
            new_fields = write_chunks(
                conn,
                self.layout,
                [chunks[i] for i in order],
                [tokens[i] for i in order],
                [vecs[i] if vecs is not None else None for i in order],
                replace_docs=replace_docs,
            )
            if parents:
                write_parents(conn, self.layout, parents)
        self.layout.range_fields |= new_fields  # committed

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        """New tokens for existing chunks, in one transaction (see :meth:`Store.set_tokens`)."""
        if isinstance(ids, str) or len(ids) != len(tokens):
            raise InvalidParameter(
                f"{len(tokens)} token lists for {len(ids)} ids", message="分词结果数量与分块数量不一致"
            )
        _check_tokens(len(ids), tokens)
        if not ids:
            return 0
        with self.pool.connection("write") as conn:
            return rewrite_tokens(conn, self.layout, ids, tokens)

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Fill vectors of existing chunks (one transaction); the HNSW index takes them row by row."""
        ids, vecs = check_vector_rows(ids, vectors, self.dim)
        if not ids:
            return 0
        with self.pool.connection("write") as conn:
            return fill_vectors(conn, self.layout, ids, vecs)

    def build_index(self, *, background: bool = True) -> None:
        """Nothing to do: pgvector maintains its HNSW index with every write."""

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        if not chunk_ids and not doc_ids:
            return 0
        with self.pool.connection("write") as conn:
            return delete_chunks(conn, self.layout, chunk_ids, doc_ids)

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: OnWait | None = None
    ) -> AbstractContextManager[None]:
        """One writer across processes and machines: a session advisory lock on its own connection.

        Keyed by (schema, KB name) (:mod:`zhiwen.store._pg_lock`); the store may be closed while
        the lock is held — the lock does not use the pool.
        """
        lock = AdvisoryWriterLock(self.url, self.settings, schema=self.schema, kb=self.kb)
        return lock.hold(wait=wait, timeout=timeout, on_wait=on_wait)

    # -- contract: admin ------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        with self.pool.connection(autocommit=True) as conn:
            row = read_stats(conn, self.layout)
        n, total_len, nv, n_parents, n_docs, n_terms, size = row
        return {
            "backend": self.backend,
            "kb": self.kb,
            "schema": self.schema,
            "url": _redact(self.url),
            "chunks": int(n),
            "documents": int(n_docs),
            "parents": int(n_parents),
            "terms": int(n_terms),
            "avg_tokens": float(total_len) / n if n else 0.0,
            "dim": self.dim,
            "vectors": int(nv) if self.dim is not None else 0,
            "vector_index": "ready" if self.dim is not None else "not_needed",  # pgvector keeps it
            "bytes": int(size),
            "pgvector": self.pgvector_version,
        }

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            release_pool(pool)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({_redact(self.url)!r}, kb={self.kb!r}, dim={self.dim})"


def _check_tokens(n: int, tokens: Sequence[Sequence[str]]) -> None:
    if len(tokens) != n:
        raise InvalidParameter(
            f"{len(tokens)} token lists for {n} chunks", message="分词结果数量与分块数量不一致"
        )
    if any(isinstance(t, str | bytes) for t in tokens):
        raise InvalidParameter("tokens must be lists of strings, not a string", message="分词结果格式错误")


def _redact(url: str) -> str:
    """The URL without its password (for stats and logs)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
