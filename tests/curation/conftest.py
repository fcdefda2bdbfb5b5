"""Curation fixtures: a small manual in a KB on each backend, with the instant ``hash`` embedder.

``curated`` is parametrised over the embedded store, PostgreSQL (skipped, saying why, when the
local server is not usable) and Qdrant Edge; ``embedded_kb`` is the embedded one alone, for the
property tests. Every call site edits, disables and searches the same three documents.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from curation.manual import manual_docs
from zhiwen.config import reset_settings_cache
from zhiwen.kb import KnowledgeBase, close_all, delete_kb, open_kb

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _pg_reason() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # any failure means: skip, and say why
        return f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
    return None


@pytest.fixture
def home(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    yield zhiwen_home
    close_all()


def _store_url(backend: str, tmp_path: Path) -> str:
    if backend == "postgres":
        reason = _pg_reason()
        if reason:
            pytest.skip(reason)
        return PG_URL
    if backend == "qdrant":
        pytest.importorskip("qdrant_edge", reason="the [qdrant] extra (qdrant-edge-py) is not installed")
        return f"qdrant+local://{tmp_path / 'qdrant'}"
    return "embedded"


MakeKB = Callable[..., KnowledgeBase]


@pytest.fixture(params=["embedded", "postgres", "qdrant"])
def make_kb(request: pytest.FixtureRequest, home: Path, tmp_path: Path) -> Iterator[MakeKB]:
    """``make_kb()`` → a new KB on the parametrised backend holding the manual (indexed)."""
    url = _store_url(request.param, tmp_path)
    names: list[str] = []

    def factory(*, index: bool = True, name: str | None = None) -> KnowledgeBase:
        name = name or f"cur_{uuid.uuid4().hex[:8]}"
        names.append(name)
        kb = open_kb(name, create=True, embedder="hash", store=url)
        if index:
            kb.index_documents(manual_docs(), progress=False)
        return kb

    yield factory
    for name in names:
        with contextlib.suppress(Exception):  # already gone (a test deleted it)
            delete_kb(name)


@pytest.fixture
def curated(make_kb: MakeKB) -> KnowledgeBase:
    return make_kb()


@pytest.fixture
def embedded_kb(home: Path) -> Iterator[MakeKB]:
    def factory(name: str | None = None) -> KnowledgeBase:
        kb = open_kb(name or f"emb_{uuid.uuid4().hex[:8]}", create=True, embedder="hash")
        kb.index_documents(manual_docs(), progress=False)
        return kb

    yield factory
