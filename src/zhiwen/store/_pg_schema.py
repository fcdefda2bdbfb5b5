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
import logging
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
from zhiwen.versions import current, get_format

log = logging.getLogger(__name__)

SCHEMA_VERSION = current("pg-schema")  # the steps: zhiwen.versions.registry, run below
HNSW_MAX_EF = 1000
# numeric metadata fields that get their own range index, per knowledge base
_MAX_RANGE_INDEXES = 32

_TABLES_DDL = [
    """CREATE TABLE IF NOT EXISTS {chunks} (
        id text PRIMARY KEY,
        rid integer NOT NULL,
        doc_id text NOT NULL,
        parent_id text,
        title text NOT NULL DEFAULT '',
        text text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        tf jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        dl integer NOT NULL DEFAULT 0)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS chunks_rid ON {chunks} (rid)",
    "CREATE INDEX IF NOT EXISTS chunks_doc_id ON {chunks} (doc_id)",
    """CREATE TABLE IF NOT EXISTS {parents} (
        id text PRIMARY KEY,
        title text NOT NULL DEFAULT '',
        text text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb)""",
    """CREATE TABLE IF NOT EXISTS {postings} (
        term text NOT NULL,
        block_no integer NOT NULL,
        n integer NOT NULL,
        first_rid integer NOT NULL,
        last_rid integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (term, block_no))""",
    """CREATE TABLE IF NOT EXISTS {stats} (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        n bigint NOT NULL DEFAULT 0,
        total_len bigint NOT NULL DEFAULT 0,
        next_rid bigint NOT NULL DEFAULT 0,
        nv bigint NOT NULL DEFAULT 0)""",
    "INSERT INTO {stats} (one) VALUES (true) ON CONFLICT DO NOTHING",
]
# the vectors live apart from the text, so BM25 and chunk reads never page 1.5 KB vectors in;
# metadata is repeated here so a filtered HNSW scan needs no join
_VECTORS_DDL = """CREATE TABLE IF NOT EXISTS {vectors} (
        id text PRIMARY KEY,
        metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        embedding vector(%d) NOT NULL)"""

# schema 1 kept vectors and a tsvector inline in chunks and df in a terms table
_UPGRADE_FROM_1 = [
    "ALTER TABLE {chunks} ADD COLUMN IF NOT EXISTS rid integer",
    "UPDATE {chunks} c SET rid = r.rn FROM "
    "(SELECT id, (row_number() OVER (ORDER BY doc_id, id) - 1)::integer AS rn FROM {chunks}) r "
    "WHERE c.id = r.id",
    "ALTER TABLE {chunks} ALTER COLUMN rid SET NOT NULL",
    "ALTER TABLE {stats} ADD COLUMN IF NOT EXISTS next_rid bigint NOT NULL DEFAULT 0",
    "UPDATE {stats} SET next_rid = (SELECT count(*) FROM {chunks})",
]
_UPGRADE_VECTORS_FROM_1 = (
    "INSERT INTO {vectors} (id, metadata, embedding) "
    "SELECT id, metadata, embedding FROM {chunks} WHERE embedding IS NOT NULL"
)
_DROP_FROM_1 = [
    "ALTER TABLE {chunks} DROP COLUMN IF EXISTS embedding, DROP COLUMN IF EXISTS search_vector",
    "DROP TABLE IF EXISTS {terms}",
]
# schema 2 had no vector count (stats.nv) and no list of metadata fields (zw_meta)
_UPGRADE_TO_3 = "ALTER TABLE {stats} ADD COLUMN IF NOT EXISTS nv bigint NOT NULL DEFAULT 0"
_COUNT_VECTORS = "UPDATE {stats} SET nv = (SELECT count(*) FROM {vectors})"
_METADATA_FIELDS = (
    "SELECT DISTINCT f.key FROM {chunks} c, jsonb_each(c.metadata) f WHERE f.value <> 'null'::jsonb"
)
_TABLE_NAMES = ("chunks", "parents", "postings", "stats", "vectors", "terms")


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


def rename_kb(url: str, old: str, new: str) -> None:
    """Give knowledge base ``old``'s schema the name of ``new``, in one transaction (an import
    stages under a temporary name, then takes the final one); ``new`` must not exist."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                    sql.Identifier(schema_name(old)), sql.Identifier(schema_name(new))
                )
            )
            conn.execute(
                sql.SQL("UPDATE {}.zw_meta SET value = %s WHERE key = 'kb'").format(
                    sql.Identifier(schema_name(new))
                ),
                (Jsonb(new, dumps=json_dumps),),
            )
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
                name = _kb_of_schema(conn, schema)
                if name:
                    names.append(name)
            return sorted(names)
    except CONNECTION_ERRORS as exc:
        raise unavailable(exc, "connect") from exc


def _kb_of_schema(conn: psycopg.Connection[Any], schema: str) -> str | None:
    """The KB name a schema holds; None when it went between the listing and this read (a KB
    being deleted or an import's staging schema renamed by another process)."""
    try:
        row = conn.execute(
            sql.SQL("SELECT value #>> '{{}}' FROM {}.zw_meta WHERE key = 'kb'").format(sql.Identifier(schema))
        ).fetchone()
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        return None
    return str(row[0]) if row and row[0] else None


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

    def tables(self) -> dict[str, sql.Identifier]:
        return {name: self.table(name) for name in _TABLE_NAMES}

    def index_ddl(self) -> dict[str, sql.Composed]:
        """The secondary indexes that a bulk load drops and rebuilds (metadata GIN, HNSW)."""
        s = self.settings
        ddl = {
            "chunks_metadata": "CREATE INDEX IF NOT EXISTS chunks_metadata ON {chunks} "
            "USING gin (metadata jsonb_path_ops)",
        }
        if self.dim is not None:
            ddl["vectors_metadata"] = (
                "CREATE INDEX IF NOT EXISTS vectors_metadata ON {vectors} USING gin (metadata jsonb_path_ops)"
            )
            ddl["vectors_embedding"] = (
                "CREATE INDEX IF NOT EXISTS vectors_embedding ON {vectors} "
                "USING hnsw (embedding vector_cosine_ops) "
                f"WITH (m = {int(s.hnsw_m)}, ef_construction = {int(s.hnsw_ef_construction)})"
            )
        return {name: sql.SQL(stmt).format(**self.tables()) for name, stmt in ddl.items()}

    def migrate(self, conn: psycopg.Connection[Any], dim: int | None) -> None:
        """Create what is missing (safe to re-run, serialised by an advisory lock); sets :attr:`dim`.

        An up-to-date schema is only read: no DDL, so opening a KB never waits for the lock of
        another process's running index transaction. A schema-1 knowledge base (vectors inline)
        is upgraded in place, in this transaction: see :meth:`_upgrade_from_1`.
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
        get_format("pg-schema").pending(version, f"PostgreSQL {self.name}", on_open=True)  # newer: refused
        self.dim = self._check_dim(meta, dim)
        self.range_fields = set(meta.get("range_fields") or [])
        if version == 1:
            self._upgrade_from_1(conn)
        tables = self.tables()
        for stmt in _TABLES_DDL:
            conn.execute(sql.SQL(stmt).format(**tables))
        if self.dim is not None:
            conn.execute(sql.SQL(_VECTORS_DDL % int(self.dim)).format(**tables))
        if 1 <= version < 3:
            self._upgrade_to_3(conn)
        for ddl in self.index_ddl().values():
            conn.execute(ddl)
        for field in self.range_fields:
            self._range_index(conn, field)
        self.set_meta(conn, "kb", self.kb)
        if self.dim is not None:
            self.set_meta(conn, "dim", self.dim)
        self.set_meta(conn, "schema_version", SCHEMA_VERSION)

    def _upgrade_from_1(self, conn: psycopg.Connection[Any]) -> None:
        """Schema 1 → 2: rids, vectors to their own table, postings from the stored term counts.

        Runs once, in the opening transaction, under the advisory lock: ~1 min per 100k chunks
        with vectors (the HNSW graph is rebuilt on the new table).
        """
        from zhiwen.store._pg_postings import rebuild_postings

        log.warning("upgrading PostgreSQL knowledge base %s from schema 1 to %d", self.kb, SCHEMA_VERSION)
        tables = self.tables()
        for stmt in _UPGRADE_FROM_1:
            conn.execute(sql.SQL(stmt).format(**tables))
        if self.dim is not None:
            conn.execute(sql.SQL(_VECTORS_DDL % int(self.dim)).format(**tables))
            conn.execute(sql.SQL(_UPGRADE_VECTORS_FROM_1).format(**tables))
        for stmt in _DROP_FROM_1:
            conn.execute(sql.SQL(stmt).format(**tables))
        for stmt in _TABLES_DDL:
            conn.execute(sql.SQL(stmt).format(**tables))
        rebuild_postings(conn, self)

    def _upgrade_to_3(self, conn: psycopg.Connection[Any]) -> None:
        """Schema 2 → 3: the vector count in ``stats`` and the metadata field list in ``zw_meta``
        (one scan each, once)."""
        tables = self.tables()
        conn.execute(sql.SQL(_UPGRADE_TO_3).format(**tables))
        if self.dim is not None:
            conn.execute(sql.SQL(_COUNT_VECTORS).format(**tables))
        fields = sorted(r[0] for r in conn.execute(sql.SQL(_METADATA_FIELDS).format(**tables)))
        self.set_meta(conn, "metadata_fields", fields)

    def metadata_fields(self, conn: psycopg.Connection[Any]) -> set[str]:
        row = conn.execute(
            sql.SQL("SELECT value FROM {} WHERE key = 'metadata_fields'").format(self.table("zw_meta"))
        ).fetchone()
        return set(row[0] or []) if row else set()

    def add_metadata_fields(self, conn: psycopg.Connection[Any], chunks: Sequence[Chunk]) -> None:
        """Record the batch's metadata keys (non-null values) in ``zw_meta``; under the write lock."""
        keys = {k for c in chunks for k, v in c.metadata.items() if v is not None}
        known = self.metadata_fields(conn)
        if not keys <= known:
            self.set_meta(conn, "metadata_fields", sorted(known | keys))

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
            self._range_index(conn, field)
        self.set_meta(conn, "range_fields", sorted(self.range_fields | set(new)))
        return set(new)

    def _range_index(self, conn: psycopg.Connection[Any], field: str) -> None:
        """The btree range index of one numeric field, on chunks (BM25) and vectors (HNSW)."""
        suffix = hashlib.blake2b(field.encode(), digest_size=6).hexdigest()
        for table in ("chunks", "vectors") if self.dim is not None else ("chunks",):
            conn.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ({})").format(
                    sql.Identifier(f"{table}_num_{suffix}"), self.table(table), numeric_expr(field)
                )
            )
