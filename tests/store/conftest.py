"""The store conformance fixture: every test in tests/store runs once per backend.

PostgreSQL is used when reachable at ``ZHIWEN_TEST_PG`` (default: the local server with trust
auth) and pgvector can be enabled there; otherwise its cases are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zhiwen.store.base import Store

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

StoreFactory = Callable[..., Store]
_pg_skip_reason: str | None = None
_pg_checked = False


def postgres_unavailable_reason() -> str | None:
    """None when PostgreSQL with pgvector is usable for tests, else why not (cached)."""
    global _pg_checked, _pg_skip_reason
    if _pg_checked:
        return _pg_skip_reason
    _pg_checked = True
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # any failure means: skip, and say why
        _pg_skip_reason = f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
    return _pg_skip_reason


@pytest.fixture(params=["embedded", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """``make_store(dim=8)`` opens a fresh, empty store of the parametrised backend.

    Calling it again with the same ``name`` reopens the same store (persistence tests).
    """
    backend: str = request.param
    opened: list[Store] = []
    names: set[str] = set()

    if backend == "postgres":
        reason = postgres_unavailable_reason()
        if reason:
            pytest.skip(reason)

    def factory(dim: int | None = 8, name: str | None = None) -> Store:
        name = name or f"t_{uuid.uuid4().hex[:10]}"
        names.add(name)
        if backend == "embedded":
            from zhiwen.store.embedded import EmbeddedStore

            store: Store = EmbeddedStore(tmp_path / name, dim=dim)
        else:
            from zhiwen.store.postgres import PostgresStore

            store = PostgresStore(PG_URL, kb=name, dim=dim)
        opened.append(store)
        return store

    yield factory

    for store in opened:
        with contextlib.suppress(Exception):
            store.close()
    if backend == "postgres":
        from zhiwen.store.postgres import drop_kb

        for name in names:
            drop_kb(PG_URL, name)
