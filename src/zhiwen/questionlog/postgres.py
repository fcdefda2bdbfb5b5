"""The question log in PostgreSQL, for a home whose store is ``ZHIWEN_STORE=postgresql://…``:
schema ``zhiwen_questions`` of that database (tables ``questions`` and ``feedback``, the same
columns as the SQLite file; ``sources`` is ``jsonb``), so every server of the deployment
writes and reads one log.

Connections come from the store's shared, self-healing pool (:mod:`zhiwen.store._pg_pool`): a
server that is down gives :class:`~zhiwen.errors.StoreUnavailable` (503 / 2002) on a read, and
a dropped batch (counted) in the writer thread.

Example::

    >>> store = PostgresQuestionStore("postgresql://postgres@127.0.0.1:5432/postgres")
    >>> store.add([record]); store.find(record.answer_id).kb
    'manual'
    >>> store.close()
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from zhiwen.config import PostgresSettings, get_settings
from zhiwen.errors import InvalidParameter
from zhiwen.questionlog._sql import COLUMNS, SQLQuestionStore, to_row
from zhiwen.questionlog.model import LoggedQuestion
from zhiwen.store._pg_pool import SharedPool, acquire_pool, release_pool
from zhiwen.versions import current, get_format

SCHEMA = "zhiwen_questions"
#: the schema's layout, kept in its comment (checked by :mod:`zhiwen.versions`)
LAYOUT = current("question-log-pg")
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

_DDL = """
CREATE TABLE IF NOT EXISTS {schema}.questions (
    answer_id text PRIMARY KEY,
    at double precision NOT NULL,
    kb text NOT NULL,
    app text NOT NULL,
    caller text NOT NULL,
    session_id text,
    question text NOT NULL,
    standalone text,
    normal text NOT NULL,
    answer_type text NOT NULL,
    answerable smallint,
    unanswered smallint NOT NULL,
    fallback text,
    faq_id text,
    faq_score double precision,
    sources jsonb NOT NULL,
    latency_ms double precision NOT NULL,
    llm_calls integer NOT NULL,
    prompt_tokens integer NOT NULL,
    completion_tokens integer NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_kb_at ON {schema}.questions (kb, at, answer_id);
CREATE INDEX IF NOT EXISTS questions_at ON {schema}.questions (at);
CREATE INDEX IF NOT EXISTS questions_unanswered ON {schema}.questions (kb, at) WHERE unanswered = 1;
CREATE TABLE IF NOT EXISTS {schema}.feedback (
    answer_id text NOT NULL,
    kb text NOT NULL,
    caller text NOT NULL,
    rating text NOT NULL,
    reason text,
    comment text,
    at double precision NOT NULL,
    PRIMARY KEY (answer_id, caller)
);
CREATE INDEX IF NOT EXISTS feedback_kb ON {schema}.feedback (kb, rating);
COMMENT ON SCHEMA {schema} IS 'zhiwen question log, layout {layout}'
"""


class PostgresQuestionStore(SQLQuestionStore):
    """:class:`~zhiwen.questionlog.base.QuestionStore` in schema ``schema`` (default
    ``zhiwen_questions``) of the database at ``url``."""

    placeholder = "%s"

    def __init__(self, url: str, *, schema: str = SCHEMA, settings: PostgresSettings | None = None) -> None:
        if not _IDENTIFIER.match(schema):
            raise InvalidParameter(f"invalid schema name {schema!r}", message=f"模式名称无效：{schema}")
        self.url = url
        self.schema = schema
        self.questions_table = f"{schema}.questions"
        self.feedback_table = f"{schema}.feedback"
        self._pool: SharedPool | None = acquire_pool(url, settings or get_settings().postgres, {})
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    def _migrate(self) -> None:
        with self._cursor() as cur:
            # two servers starting at once: one creates, the other waits and finds it done
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.schema,))
            cur.execute(
                "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
                (self.schema,),
            )
            row = cur.fetchone()
            if row is not None:  # refuses a newer layout before any DDL
                found = re.search(r"layout (\d+)", str(row[0] or ""))
                layout = int(found[1]) if found else 0
                get_format("question-log-pg").pending(layout, self.schema, on_open=True)
            cur.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            for statement in _DDL.format(schema=self.schema, layout=LAYOUT).split(";"):
                if statement.strip():
                    cur.execute(statement)

    def add(self, records: Sequence[LoggedQuestion]) -> None:
        """COPY (about twice the rows per second of a batched INSERT); an id already there —
        a record queued twice — makes the batch go again through the INSERT that skips it."""
        if not records:
            return
        rows = [to_row(q) for q in records]
        copy_in = f"COPY {self.questions_table} ({', '.join(COLUMNS)}) FROM STDIN"
        try:
            with self._cursor() as cur, cur.copy(copy_in) as copy:
                for row in rows:
                    copy.write_row(row)
        except psycopg.errors.UniqueViolation:
            super().add(records)

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        if self._pool is None:
            raise InvalidParameter("question log closed", message="问答记录已关闭")
        with self._pool.connection("questions") as conn, conn.cursor() as cur:
            yield cur

    def drop(self) -> None:
        """Remove the whole schema (tests; an operator wiping the log)."""
        with self._cursor() as cur:
            cur.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            release_pool(pool)
