"""Portable fixtures: a small curated KB (the curation tests' manual) and the three backends.

``backend_url(name)`` gives the store URL of ``embedded``, ``postgres`` (skipped, saying why,
when the local server is not usable) or ``qdrant`` (Qdrant Edge in ``tmp_path``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from curation.manual import manual_docs
from store.conftest import PG_URL, postgres_unavailable_reason
from zhiwen.config import reset_settings_cache
from zhiwen.faq import FAQEntry
from zhiwen.kb import KnowledgeBase, close_all, delete_kb, list_kbs, open_kb
from zhiwen.kb.faq import put_faq_entries

QUESTIONS = ("怎么安装", "退货运费谁承担", "土豆炖牛肉怎么做", "电子发票", "知识库管理员是谁")


@pytest.fixture
def home(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    yield zhiwen_home
    for name in list_kbs():
        with contextlib.suppress(Exception):
            delete_kb(name)  # a PostgreSQL schema outlives the home otherwise
    close_all()


@pytest.fixture
def backend_url(tmp_path: Path) -> Callable[[str], str]:
    def url(backend: str) -> str:
        if backend == "postgres":
            reason = postgres_unavailable_reason()
            if reason:
                pytest.skip(reason)
            return PG_URL
        if backend == "qdrant":
            pytest.importorskip("qdrant_edge", reason="the [qdrant] extra (qdrant-edge-py) is not installed")
            return f"qdrant+local://{tmp_path / 'qdrant'}"
        return "embedded"

    return url


def curate(kb: KnowledgeBase) -> None:
    """Every kind of owners' work: an edit, a disabled chunk, questions, keywords, an FAQ entry,
    a dictionary word and a synonym group."""
    cur = kb.curation
    cur.update("guide#0", actor="t", text="运行 pip install zhiwen 即可安装，需要 Python 3.12。")
    cur.update("policy#2", actor="t", enabled=False)
    cur.update("policy#0", actor="t", questions=["东西不想要了怎么办"], keywords=["七天无理由"])
    cur.set_words(["知识库管理员"], actor="t", background=False)
    cur.set_groups([["土豆", "马铃薯", "洋芋"]], actor="t", background=False)
    put_faq_entries(
        kb, [FAQEntry.create("知识库管理员是谁？", "请联系张三。", similar=["谁管知识库"])], actor="t"
    )


@pytest.fixture
def curated_kb(home: Path) -> KnowledgeBase:
    kb = open_kb("manual", create=True, embedder="hash")
    kb.index_documents(manual_docs(), progress=False)
    curate(kb)
    return kb


def top10(kb: KnowledgeBase, questions: tuple[str, ...] = QUESTIONS) -> list[list[str]]:
    return [[h.chunk.id for h in kb.search(q, top_k=10)] for q in questions]
