"""API fixtures: an app over an isolated home, a fake KB injected through the KB registry."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import Settings
from zhiwen.documents import Chunk, SearchHit
from zhiwen.errors import KnowledgeBaseNotFound
from zhiwen.httpkit.deps import KBRegistry, get_kb_registry, get_pipeline
from zhiwen.kb.config import KBConfig
from zhiwen.retrieve.pipeline import RetrievalPipeline

ADMIN_TOKEN = "s3cret-token"

TEXTS = [
    ("manual/install", "安装：pip install zhiwen，然后运行 zhiwen demo 启动演示。"),
    ("manual/install", "安装失败时请检查 Python 版本是否为 3.11 以上。"),
    ("manual/search", "检索支持 bm25、dense、hybrid 三种模式，默认混合检索。"),
    ("manual/search", "混合检索使用加权融合或 RRF 融合两路结果。"),
    ("manual/admin", "管理接口需要在配置中设置 admin_token。"),
    ("manual/faq", "报错 3004 表示知识库不存在，请先创建知识库。"),
]


class FakeKB:
    """Returns the fixed chunks with descending scores; records every search call."""

    def __init__(self, name: str = "demo", texts: Sequence[tuple[str, str]] = TEXTS, app: str | None = None):
        self.name = name
        self.path = None  # not tuned
        self.calls: list[dict[str, Any]] = []
        self.config = KBConfig(name=name, embedder="hash", dim=8, app=app)
        self.chunks = [
            Chunk(id=f"{doc}#{i}", doc_id=doc, text=text, title=doc.split("/")[-1], metadata={"n": i})
            for i, (doc, text) in enumerate(texts)
        ]

    def search(self, query: str, **kwargs: Any) -> list[SearchHit]:
        self.calls.append({"query": query, **kwargs})
        k = kwargs.get("top_k", 10)
        hits = []
        for rank, chunk in enumerate(self.chunks[:k]):
            fused = 1.0 - rank * 0.1
            hits.append(
                SearchHit(
                    chunk=chunk,
                    score=fused,
                    fused_score=fused,
                    bm25_score=5.0 - rank,
                    vector_score=0.9 - rank * 0.05,
                    bm25_rank=rank + 1,
                    vector_rank=rank + 1,
                )
            )
        return hits

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "documents": 4, "chunks": len(self.chunks), "app": self.config.app}

    def close(self) -> None:
        pass


class FakeRegistry(KBRegistry):
    def __init__(self, settings: Settings, kbs: dict[str, FakeKB]) -> None:
        super().__init__(settings)
        self.kbs = kbs

    def names(self) -> list[str]:
        return sorted(self.kbs)

    def get(self, name: str) -> Any:
        if name not in self.kbs:
            raise KnowledgeBaseNotFound(f"no KB {name!r}", message=f"知识库不存在：{name}")
        return self.kbs[name]


class FixedReranker:
    """Seed 004 §3.4: a fake model returning fixed scores (cycled), or raising."""

    name = "fixed"

    def __init__(self, scores: Sequence[float] = (0.9, 0.2), error: Exception | None = None) -> None:
        self.scores = list(scores)
        self.error = error
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        if self.error is not None:
            raise self.error
        return [self.scores[i % len(self.scores)] for i in range(len(texts))]


@pytest.fixture
def settings(zhiwen_home: Path) -> Settings:
    return Settings(home=zhiwen_home, api={"admin_token": ADMIN_TOKEN})


@pytest.fixture
def fake_kb() -> FakeKB:
    return FakeKB()


@pytest.fixture
def reranker() -> FixedReranker:
    return FixedReranker()


@pytest.fixture
def make_client(
    settings: Settings, fake_kb: FakeKB, reranker: FixedReranker
) -> Iterator[Callable[..., TestClient]]:
    """``make_client(settings=None, fake=True, auth=True)`` → a TestClient; fake=True injects
    FakeKB + reranker. The settings configure an admin token, so every route but ``/healthz``
    needs a bearer (#29): the client sends it on every request unless ``auth=False``."""
    clients: list[TestClient] = []

    def make(app_settings: Settings | None = None, *, fake: bool = True, auth: bool = True) -> TestClient:
        s = app_settings or settings
        app: FastAPI = create_app(s, app_routers=False)
        if fake:
            app.dependency_overrides[get_kb_registry] = lambda: FakeRegistry(s, {"demo": fake_kb})
            dynamic = app.state.dynamic_settings
            searcher = RetrievalPipeline(dynamic.get, reranker_factory=lambda cfg: reranker)
            app.dependency_overrides[get_pipeline] = lambda: searcher
        token = s.api.admin_token if auth else None
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = TestClient(app, raise_server_exceptions=False, headers=headers)
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture
def admin() -> dict[str, str]:
    """Headers with the configured admin bearer token."""
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}
