"""The PostgreSQL store's schema: per-KB DDL, migrations, meta, and the database-level admin calls.

Every knowledge base lives in its own schema ``zw_<name>`` (tables described in
:mod:`zhiwen.store.postgres`). :meth:`KBSchema.migrate` creates whatever is missing, safe to
re-run and serialised between processes by an advisory lock; an up-to-date schema is only read,
so opening a knowledge base never waits behind another process's index transaction.
:func:`server_features` enables pgvector and picks the session settings its version allows.

Example::

    layout = KBSchema("manual", settings)
    with pool.connection("migrate") as conn:
        layout.migrate(conn, dim=384)
    sql.SQL("SELECT count(*) FROM {}").format(layout.table("chunks"))
    drop_kb("postgresql://postgres@127.0.0.1:5432/postgres", "manual")
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from zhiwen.config import PostgresSettings
from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._pg_filters import json_dumps, numeric_expr
from zhiwen.store._pg_pool import CONNECTION_ERRORS, connect_kwargs, unavailable

SCHEMA_VERSION = 1
# tsvector lexemes are limited to 2 KiB; longer "tokens" (base64 blobs…) are not searchable
MAX_LEXEME_BYTES = 1000
HNSW_MAX_EF = 1000
# numeric metadata fields that get their own range index, per knowledge base
_MAX_RANGE_INDEXES = 32

_TABLES_DDL = [
    """CREATE TABLE IF NOT EXISTS {chunks} (
        id text PRIMARY KEY,
        doc_id text NOT NULL,
        parent_id text,
        title text NOT NULL DEFAULT '',
        text text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        tf jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        dl integer NOT NULL DEFAULT 0,
        search_vector tsvector NOT NULL DEFAULT ''::tsvector)""",
    "CREATE INDEX IF NOT EXISTS chunks_doc_id ON {chunks} (doc_id)",
    """CREATE TABLE IF NOT EXISTS {parents} (
        id text PRIMARY KEY,
        title text NOT NULL DEFAULT '',
        text text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb)""",
    "CREATE TABLE IF NOT EXISTS {terms} (term text PRIMARY KEY, df integer NOT NULL)",
    """CREATE TABLE IF NOT EXISTS {stats} (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        n bigint NOT NULL DEFAULT 0,
        total_len bigint NOT NULL DEFAULT 0)""",
    "INSERT INTO {stats} (one) VALUES (true) ON CONFLICT DO NOTHING",
]


def schema_name(kb: str) -> str:
    """``zw_<kb>`` when ``kb`` is a plain identifier, else a sanitised name plus a short hash."""
    if not isinstance(kb, str) or not kb:
        raise InvalidParameter(f"invalid knowledge base name {kb!r}", message=f"知识库名称无效：{kb}")
    plain = re.sub(r"[^a-z0-9_]", "_", kb.lower())
    if plain == kb and len(plain) <= 48:
        return f"zw_{plain}"
    digest = hashlib.blake2b(kb.encode("utf-8"), digest_size=4).hexdigest()
    return f"zw_{plain[:40]}_{digest}"


def drop_kb(url: str, kb: str) -> bool:
    """Drop a knowledge base's schema (all its data); True when it existed."""
    schema = schema_name(kb)
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            return exists is not None
    except CONNECTION_ERRORS as exc:
        raise unavailable(exc, "connect") from exc


def list_kbs(url: str) -> list[str]:
    """Names of the knowledge bases stored in this database."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(
                "SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid "
                "WHERE n.nspname LIKE 'zw\\_%%' AND c.relname = 'zw_meta'"
            ).fetchall()
            names = []
            for (schema,) in rows:
                row = conn.execute(
                    sql.SQL("SELECT value #>> '{{}}' FROM {}.zw_meta WHERE key = 'kb'").format(
                        sql.Identifier(schema)
                    )
                ).fetchone()
                if row and row[0]:
                    names.append(row[0])
            return sorted(names)
    except CONNECTION_ERRORS as exc:
        raise unavailable(exc, "connect") from exc


def server_features(url: str, settings: PostgresSettings) -> tuple[str, dict[str, str]]:
    """Make sure pgvector is enabled; returns its version and the session settings to apply."""
    try:
        with psycopg.connect(url, autocommit=True, **connect_kwargs(url, settings)) as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            if row is None:
                try:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                except psycopg.Error as exc:
                    raise StoreUnavailable(
                        str(exc).splitlines()[0],
                        message="PostgreSQL 未安装 pgvector 扩展，请先运行 scripts/install-pgvector.sh",
                    ) from exc
                row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    except CONNECTION_ERRORS as exc:
        raise unavailable(exc, "connect") from exc
    version = str(row[0]) if row else "0"
    session = {
        "hnsw.ef_search": str(min(settings.hnsw_ef_search, HNSW_MAX_EF)),
        # short OLTP queries: JIT compilation cost 30-100 ms per query for nothing
        "jit": "off",
    }
    major_minor = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if major_minor >= (0, 8):
        # keep scanning the graph until LIMIT rows pass the WHERE clause (filtered search)
        session["hnsw.iterative_scan"] = "relaxed_order"
    return version, session


class KBSchema:
    """The schema of one knowledge base: table names, DDL, and what its ``zw_meta`` says.

    :attr:`dim` and :attr:`range_fields` are known after :meth:`migrate`.
    """

    def __init__(self, kb: str, settings: PostgresSettings) -> None:
        self.kb = kb
        self.name = schema_name(kb)
        self.settings = settings
        self.dim: int | None = None
        self.range_fields: set[str] = set()

    def table(self, table: str) -> sql.Identifier:
        return sql.Identifier(self.name, table)

    def index_ddl(self) -> dict[str, sql.Composed]:
        """The secondary indexes of ``chunks`` that a bulk load drops and rebuilds."""
        s = self.settings
        ddl = {
            "chunks_search_vector": "CREATE INDEX IF NOT EXISTS chunks_search_vector ON {chunks} "
            "USING gin (search_vector)",
            "chunks_metadata": "CREATE INDEX IF NOT EXISTS chunks_metadata ON {chunks} "
            "USING gin (metadata jsonb_path_ops)",
        }
        if self.dim is not None:
            ddl["chunks_embedding"] = (
                "CREATE INDEX IF NOT EXISTS chunks_embedding ON {chunks} "
                "USING hnsw (embedding vector_cosine_ops) "
                f"WITH (m = {int(s.hnsw_m)}, ef_construction = {int(s.hnsw_ef_construction)})"
            )
        return {name: sql.SQL(stmt).format(chunks=self.table("chunks")) for name, stmt in ddl.items()}

    def migrate(self, conn: psycopg.Connection[Any], dim: int | None) -> None:
        """Create what is missing (safe to re-run, serialised by an advisory lock); sets :attr:`dim`.

        An up-to-date schema is only read: no DDL, so opening a KB never waits for the lock of
        another process's running index transaction.
        """
        meta = self._meta(conn)
        up_to_date = int(meta.get("schema_version", 0)) == SCHEMA_VERSION
        if up_to_date and (meta.get("dim") is not None or dim is None):
            self.dim = self._check_dim(meta, dim)
            self.range_fields = set(meta.get("range_fields") or [])
            return
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.name,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.name)))
        conn.execute(
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, value jsonb)").format(
                self.table("zw_meta")
            )
        )
        meta = self._meta(conn)
        version = int(meta.get("schema_version", 0))
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"schema {self.name} has version {version} > {SCHEMA_VERSION}",
                message="数据库中的知识库由更新版本的 zhiwen 创建，请升级",
            )
        self.dim = self._check_dim(meta, dim)
        stmts = list(_TABLES_DDL)
        if self.dim is not None:
            stmts += [
                f"ALTER TABLE {{chunks}} ADD COLUMN IF NOT EXISTS embedding vector({int(self.dim)})",
                # inline (PLAIN) vectors: TOASTed ones made the planner choose a seq scan
                "ALTER TABLE {chunks} ALTER COLUMN embedding SET STORAGE PLAIN",
            ]
        tables = {name: self.table(name) for name in ("chunks", "parents", "terms", "stats")}
        for stmt in stmts:
            conn.execute(sql.SQL(stmt).format(**tables))
        for ddl in self.index_ddl().values():
            conn.execute(ddl)
        self.set_meta(conn, "kb", self.kb)
        if self.dim is not None:
            self.set_meta(conn, "dim", self.dim)
        self.set_meta(conn, "schema_version", SCHEMA_VERSION)
        self.range_fields = set(meta.get("range_fields") or [])

    def _check_dim(self, meta: dict[str, Any], dim: int | None) -> int | None:
        stored = meta.get("dim")
        if stored is not None and dim is not None and int(stored) != dim:
            raise InvalidParameter(
                f"knowledge base {self.kb!r} has dim {stored}, opened with {dim}",
                message=f"知识库 {self.kb} 的向量维度为 {stored}，与当前嵌入模型的维度 {dim} 不一致",
            )
        return int(stored) if stored is not None else dim

    def _meta(self, conn: psycopg.Connection[Any]) -> dict[str, Any]:
        """The KB's zw_meta as a dict; empty when the schema does not exist yet."""
        exists = conn.execute("SELECT to_regclass(%s)", (f'"{self.name}".zw_meta',)).fetchone()
        if not exists or exists[0] is None:
            return {}
        rows = conn.execute(sql.SQL("SELECT key, value FROM {}").format(self.table("zw_meta"))).fetchall()
        return {k: v for k, v in rows}

    def set_meta(self, conn: psycopg.Connection[Any], key: str, value: Any) -> None:
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ).format(self.table("zw_meta")),
            (key, Jsonb(value, dumps=json_dumps)),
        )

    def ensure_range_indexes(self, conn: psycopg.Connection[Any], chunks: Sequence[Chunk]) -> set[str]:
        """A btree on the numeric value of every numeric metadata field (range filters).

        Returns the fields indexed now; the caller adds them to :attr:`range_fields` once the
        transaction has committed (a rolled-back one takes the indexes with it).
        """
        if len(self.range_fields) >= _MAX_RANGE_INDEXES:
            return set()
        found: set[str] = set()
        for chunk in chunks:
            for key, value in chunk.metadata.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    found.add(key)
        new = sorted(found - self.range_fields)[: _MAX_RANGE_INDEXES - len(self.range_fields)]
        if not new:
            return set()
        for field in new:
            name = "chunks_num_" + hashlib.blake2b(field.encode(), digest_size=6).hexdigest()
            conn.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ({})").format(
                    sql.Identifier(name), self.table("chunks"), numeric_expr(field)
                )
            )
        self.set_meta(conn, "range_fields", sorted(self.range_fields | set(new)))
        return set(new)
