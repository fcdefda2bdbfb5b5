"""The question store fixture: every conformance case runs on SQLite and on PostgreSQL.

PostgreSQL is the local server (``ZHIWEN_TEST_PG``, trust auth); each case gets a schema of its
own (other test runs share the server), dropped afterwards. Unreachable: skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zhiwen.questionlog.base import QuestionStore

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
_pg_reason: list[str | None] = []


def postgres_reason() -> str | None:
    """None when PostgreSQL answers at ``PG_URL``, else why not (asked once)."""
    if not _pg_reason:
        try:
            import psycopg

            with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
                conn.execute("SELECT 1")
            _pg_reason.append(None)
        except Exception as exc:  # any failure: skip, saying why
            _pg_reason.append(f"PostgreSQL not usable at {PG_URL}: {exc}".splitlines()[0])
    return _pg_reason[0]


StoreFactory = Callable[[], QuestionStore]


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory of stores over ONE place (a second call reopens the same log)."""
    opened: list[QuestionStore] = []
    if request.param == "postgres":
        reason = postgres_reason()
        if reason:
            pytest.skip(reason)
        from zhiwen.questionlog.postgres import PostgresQuestionStore

        schema = f"zq_test_{uuid.uuid4().hex[:12]}"

        def make() -> QuestionStore:
            opened.append(PostgresQuestionStore(PG_URL, schema=schema))
            return opened[-1]
    else:
        from zhiwen.questionlog.sqlite import SQLiteQuestionStore

        def make() -> QuestionStore:
            opened.append(SQLiteQuestionStore(tmp_path / "questions.sqlite"))
            return opened[-1]

    yield make
    if request.param == "postgres":
        from zhiwen.questionlog.postgres import PostgresQuestionStore

        PostgresQuestionStore(PG_URL, schema=schema).drop()
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: StoreFactory) -> QuestionStore:
    return open_store()
