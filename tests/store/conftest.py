"""The store conformance fixture: every test in tests/store runs once per backend.

* ``embedded`` — the default store;
* ``postgres`` — used when reachable at ``ZHIWEN_TEST_PG`` (default: the local server with trust
  auth) and pgvector can be enabled there; otherwise its cases are skipped with the reason;
* ``qdrant`` — Qdrant Edge (``qdrant-edge-py``): Qdrant's engine core in process, in ``tmp_path``;
* ``qdrant-client`` — the server code path (``qdrant://``, :mod:`zhiwen.store._qdrant_server`)
  driven through qdrant-client's in-memory mode, the only Qdrant API reachable offline. It
  checks our mapping onto the client's request models; the engine behind it is the client's
  Python emulation, which is why ``qdrant`` (Edge) is the backend of record.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zhiwen.config import PostgresSettings
from zhiwen.store.base import Store

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

StoreFactory = Callable[..., Store]


def pytest_configure(config: pytest.Config) -> None:
    # the in-memory client warns that it ignores payload indexes (a server uses them)
    config.addinivalue_line("filterwarnings", "ignore:Payload indexes have no effect:UserWarning")


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
        first = f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
        _pg_skip_reason = f"{first} (bash scripts/test.sh --system sets it up)"
    return _pg_skip_reason


def _qdrant_engine(backend: str, root: Path, name: str, clients: dict[str, object]) -> object:
    if backend == "qdrant":
        from zhiwen.store._qdrant_edge import EdgeEngine

        return EdgeEngine(root, name)
    from qdrant_client import QdrantClient

    from zhiwen.store._qdrant_server import ServerEngine

    # one in-memory "server" per test, shared by the stores it opens (reopen = same data)
    client = clients.setdefault("client", QdrantClient(":memory:"))
    engine = ServerEngine(client, name)  # type: ignore[arg-type]
    engine.close = lambda: None  # type: ignore[method-assign]  # the server outlives one store
    return engine


def _skip_when_unusable(backend: str) -> None:
    """Skip the case, saying why, when the backend's server or extra is not there."""
    if backend == "postgres":
        reason = postgres_unavailable_reason()
        if reason:
            pytest.skip(reason)
    elif backend == "qdrant":
        pytest.importorskip("qdrant_edge", reason="the [qdrant] extra (qdrant-edge-py) is not installed")
    elif backend == "qdrant-client":
        pytest.importorskip("qdrant_client", reason="the [qdrant] extra (qdrant-client) is not installed")


def _open_backend(
    backend: str, name: str, dim: int | None, tmp_path: Path, qdrant_root: Path, clients: dict[str, object]
) -> Store:
    if backend == "embedded":
        from zhiwen.store.embedded import EmbeddedStore

        return EmbeddedStore(tmp_path / name, dim=dim)
    if backend.startswith("qdrant"):
        from zhiwen.store.qdrant import QdrantStore

        engine = _qdrant_engine(backend, qdrant_root, name, clients)
        return QdrantStore(engine, kb=name, dim=dim)  # type: ignore[arg-type]
    from zhiwen.store.postgres import PostgresStore

    return PostgresStore(PG_URL, kb=name, dim=dim)


@pytest.fixture(params=["embedded", "postgres", "qdrant", "qdrant-client"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """``make_store(dim=8)`` opens a fresh, empty store of the parametrised backend.

    Calling it again with the same ``name`` reopens the same store (persistence tests).
    """
    backend: str = request.param
    opened: list[Store] = []
    names: set[str] = set()
    clients: dict[str, object] = {}
    _skip_when_unusable(backend)

    # Qdrant Edge shards on tmpfs when there is one: each shard creation and flush fsyncs, which
    # on a busy shared disk costs more than the test itself
    shm = Path("/dev/shm")
    qdrant_root = Path(tempfile.mkdtemp(prefix="zw-qdrant-", dir=shm if shm.is_dir() else None))

    def factory(dim: int | None = 8, name: str | None = None) -> Store:
        name = name or f"t_{uuid.uuid4().hex[:10]}"
        names.add(name)
        store = _open_backend(backend, name, dim, tmp_path, qdrant_root, clients)
        opened.append(store)
        return store

    yield factory

    for store in opened:
        with contextlib.suppress(Exception):
            store.close()
    shutil.rmtree(qdrant_root, ignore_errors=True)
    if backend == "postgres":
        from zhiwen.store.postgres import drop_kb

        for name in names:
            drop_kb(PG_URL, name)


# -- PostgreSQL-only fixtures (test_postgres.py, test_pg_postings.py) ---------------------------------
@pytest.fixture
def kb_names() -> Iterator[list[str]]:
    """Names of PostgreSQL knowledge bases a test created; dropped after it."""
    names: list[str] = []
    yield names
    from zhiwen.store.postgres import drop_kb

    for name in names:
        with contextlib.suppress(Exception):
            drop_kb(PG_URL, name)


@pytest.fixture
def open_pg(kb_names: list[str]) -> Iterator[Callable[..., Any]]:
    """``open_pg(dim=8, url=..., settings=...)`` → a PostgresStore on a fresh KB, closed after."""
    from zhiwen.store.postgres import PostgresStore

    opened: list[PostgresStore] = []

    def factory(
        dim: int | None = 8,
        *,
        name: str | None = None,
        url: str = PG_URL,
        settings: PostgresSettings | None = None,
    ) -> PostgresStore:
        name = name or f"tpg_{uuid.uuid4().hex[:10]}"
        if name not in kb_names:
            kb_names.append(name)
        store = PostgresStore(url, kb=name, dim=dim, settings=settings)
        opened.append(store)
        return store

    yield factory
    for s in opened:
        with contextlib.suppress(Exception):
            s.close()
