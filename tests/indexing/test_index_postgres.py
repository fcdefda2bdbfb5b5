"""A KB stored in PostgreSQL: lexical-first phases, and the writer lock as a server advisory lock."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiwen.documents import Document
from zhiwen.errors import KnowledgeBaseBusy
from zhiwen.kb import delete_kb, open_kb

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

pytestmark = pytest.mark.postgres


def _pg_reason() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # any failure means: skip, and say why
        first = f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
        return f"{first} (bash scripts/test.sh --system sets it up)"
    return None


@pytest.fixture
def pg_kb(home: Path) -> Iterator[str]:
    reason = _pg_reason()
    if reason:
        pytest.skip(reason)
    name = f"lex_{uuid.uuid4().hex[:8]}"
    open_kb(name, create=True, store=PG_URL)
    yield name
    delete_kb(name)


def test_lexical_first_on_postgres(pg_kb: str) -> None:
    kb = open_kb(pg_kb)
    docs = [Document(id=f"d{i}", text=f"第{i}篇：知识库{i % 3}号讲检索。", title=f"t{i}") for i in range(12)]
    report = kb.index_documents(docs, progress=False, dense="skip")
    assert report.vectors_missing == 12 and kb.info()["dense_coverage"] == 0.0
    assert kb.search("知识库1号", mode="bm25", top_k=3)
    fill = kb.fill_vectors()
    assert fill.embedded == 12 and fill.missing == 0 and kb.info()["dense_coverage"] == 1.0
    assert not kb.index_documents(docs, prune=True, progress=False).changed


def test_store_advisory_lock_joins_the_kb_writer(pg_kb: str) -> None:
    """The KB's writer takes the store's PostgreSQL advisory lock too: a writer holding only that
    one (as one on another machine, sharing the database but not the home, would) excludes it."""
    kb = open_kb(pg_kb)
    held, release = threading.Event(), threading.Event()

    def other_machine() -> None:
        with kb.store.writer_lock():
            held.set()
            release.wait(10)

    t = threading.Thread(target=other_machine)
    t.start()
    try:
        assert held.wait(10)
        with pytest.raises(KnowledgeBaseBusy):
            kb.index_documents([Document(id="x", text="新段落")], progress=False, wait=False)
    finally:
        release.set()
        t.join()
    assert kb.index_documents([Document(id="x", text="新段落")], progress=False, wait=False).revision == 1
