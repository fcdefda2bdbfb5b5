"""Fault-suite fixtures: a real app (TestClient) over small real KBs, its LLM a local fake.

The KBs are built once per session in their own ZHIWEN_HOME (hash embedder): ``demo`` (the
bundled manual) and, when ../shared/data is present, ``listings`` (the Chengdu Lianjia CSV) for
the app route ``POST /ask``. Every test gets its own fake OpenAI-compatible server on loopback
(:mod:`support.fake_openai`) and its own breaker (breakers are per endpoint, and each fake has
its own port).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.api.app import create_app
from zhiwen.config import LLMSettings, ResilienceSettings, Settings
from zhiwen.llm import OpenAIChatClient, clear_llm_cache

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
CD_CSV = SHARED_DATA / "lianjia_ershoufang" / "ErshoufangSpider_cd.csv"


@pytest.fixture(scope="session")
def fault_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from zhiwen.answer.qa import answer_question
    from zhiwen.kb import open_kb

    home = tmp_path_factory.mktemp("faults_home")
    base = Settings(home=home, llm=LLMSettings(base_url=None), _env_file=None)
    kb = open_kb("demo", settings=base, create=True, embedder="hash")
    kb.index_path(REPO / "src" / "zhiwen" / "sample_kb", progress=False)
    # warm up once (tokenizer, answer stage): a cold first request spends its deadline on loading
    answer_question(kb, "怎么安装知问？", llm=None, settings=base)
    kb.close()
    with FakeOpenAI("好的。") as fake:  # and the LLM client (importing the openai SDK takes ~1 s)
        OpenAIChatClient(base_url=fake.base_url, model="fake").chat([{"role": "user", "content": "你好"}])
    if CD_CSV.is_file():
        from zhiwen.apps.listings.ingest import load_lianjia

        listings = load_lianjia(CD_CSV)
        kb = open_kb("listings", settings=base, create=True, embedder="hash", app="listings")
        kb.index_documents(listings.documents, chunks=listings.chunks, progress=False)
        kb.close()
    return home


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake
    clear_llm_cache()


@pytest.fixture
def serve(fault_home: Path, fake_llm: FakeOpenAI) -> Iterator[Callable[..., TestClient]]:
    """``serve(default_reply, timeout_s=1.5, max_retries=2, **resilience)`` → a client whose LLM
    is ``fake_llm`` answering ``default_reply``."""
    clients: list[TestClient] = []

    def make(
        reply: Reply | None = None, *, timeout_s: float = 1.5, max_retries: int = 2, **resilience: Any
    ) -> TestClient:
        if reply is not None:
            fake_llm.default = reply
        settings = Settings(
            home=fault_home,
            llm=LLMSettings(
                base_url=fake_llm.base_url, model="fake", timeout_s=timeout_s, max_retries=max_retries
            ),
            resilience=ResilienceSettings(**resilience),
            _env_file=None,
        )
        client = TestClient(create_app(settings), raise_server_exceptions=False)
        clients.append(client)
        # open the KB and run the pipeline once: the deadlines under test are for the LLM
        client.post("/knowledge-base/search", json={"kb": "demo", "query": "安装"})
        return client

    yield make
    for client in clients:
        client.close()
