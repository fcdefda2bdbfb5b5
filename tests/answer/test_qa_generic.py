"""Generic KB QA (any app): retrieval → one LLM call or a cited extractive answer; faults."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.answer.extractive import extractive_footer
from zhiwen.answer.qa import NO_RESULTS_ANSWER, answer_question, collect_stream, stream_question
from zhiwen.config import Settings
from zhiwen.documents import Document
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.base import ChatResult
from zhiwen.retrieve.pipeline import RetrievalPipeline

DOCS = [
    Document(id="start", title="快速开始", text="# 快速开始\n\n用 zhiwen index 命令创建知识库并导入文档。"),
    Document(id="search", title="检索", text="# 检索\n\n混合检索结合 BM25 与向量检索，用 RRF 融合。"),
    Document(id="serve", title="服务", text="# 服务\n\n用 zhiwen serve 启动 HTTP 服务，默认端口 8000。"),
]


@pytest.fixture
def demo_kb(zhiwen_home: Path) -> Iterator[KnowledgeBase]:
    kb = open_kb("demo", create=True, embedder="hash")
    kb.index_documents(DOCS, progress=False)
    yield kb


def test_extractive_without_llm(demo_kb: KnowledgeBase) -> None:
    ans = answer_question(demo_kb, "怎么创建知识库", top_k=2, llm=None)
    assert ans.route == "general" and not ans.llm_used and ans.extractive_reason == "no_llm"
    # the lead first (the best sentence, cited), the note that no LLM wrote it at the end
    assert ans.answer.startswith("用 zhiwen index 命令创建知识库并导入文档。[1]")
    assert ans.answer.endswith(extractive_footer("no_llm")) and ans.answerable is True
    assert ans.citations[0].id == "start" and "- [1] 快速开始" in ans.answer
    assert len(ans.citations) <= 2 and ans.citations[0].kb == demo_kb.name


def test_auto_llm_uses_settings(demo_kb: KnowledgeBase) -> None:
    # zhiwen_home unsets ZHIWEN_LLM__BASE_URL: AUTO resolves to no LLM
    assert answer_question(demo_kb, "怎么启动服务").extractive_reason == "no_llm"


def test_one_llm_call(demo_kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("用 zhiwen index 创建 [1]。"))
    ans = answer_question(demo_kb, "怎么创建知识库", llm=client)
    assert ans.llm_used and ans.answer == "用 zhiwen index 创建 [1]。" and fake_llm.calls == 1
    assert "[1] 快速开始" in fake_llm.requests[0]["messages"][1]["content"]


@pytest.mark.parametrize("fault", ["hang", "500", "429", "401", "malformed", "empty", "drop"])
def test_faults_fall_back(
    demo_kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI, fault: str
) -> None:
    fake_llm.default = Reply.fault(fault, delay_s=10)
    t0 = time.perf_counter()
    ans = answer_question(demo_kb, "怎么创建知识库", llm=client)
    assert time.perf_counter() - t0 < client.timeout_s + 5.0  # the timeout, not the 10 s fault
    assert not ans.llm_used and ans.extractive_reason not in (None, "no_llm")
    assert "摘自知识库" in ans.answer and "[1]" in ans.answer


class _Broken:
    model = "broken"

    def chat(self, messages: object, **kwargs: object) -> ChatResult:
        raise RuntimeError("adapter bug")

    def stream(self, messages: object, **kwargs: object) -> Iterator[str]:
        yield "半句"
        raise RuntimeError("adapter bug")

    def chat_json(self, messages: object, **kwargs: object) -> object:
        raise RuntimeError("adapter bug")


def test_broken_adapter_never_raises(demo_kb: KnowledgeBase) -> None:
    ans = answer_question(demo_kb, "怎么创建知识库", llm=_Broken())
    assert ans.extractive_reason == "error" and not ans.llm_used
    streamed = collect_stream(stream_question(demo_kb, "怎么创建知识库", llm=_Broken()))
    assert streamed.answer.startswith("半句") and "输出中断" in streamed.answer and not streamed.llm_used


def test_stream_events(demo_kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("默认端口 8000 [1]。", chunk_chars=2))
    events = list(stream_question(demo_kb, "服务端口是多少", llm=client))
    assert events[0].type == "sources" and events[-1].type == "done"
    done = events[-1].data
    assert {k: done[k] for k in ("llm_used", "route", "extractive_reason")} == {
        "llm_used": True,
        "route": "general",
        "extractive_reason": None,
    }
    assert done["params"]["mode"] == "hybrid" and "rerank" in done["params"]
    assert "".join(e.text for e in events) == "默认端口 8000 [1]。"
    closing = events[-1].answer
    assert closing is not None and closing.answer == "默认端口 8000 [1]。" and closing.llm_used


def test_no_results(zhiwen_home: Path, client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    kb = open_kb("tiny", create=True, embedder="hash")
    kb.index_documents(
        [Document(id="a", text="# 甲\n\n内容", title="甲", metadata={"k": "x"})], progress=False
    )
    ans = answer_question(kb, "任何问题", llm=client, filters={"k": "nothing"})
    assert ans.answer == NO_RESULTS_ANSWER and ans.citations == [] and fake_llm.calls == 0
    assert ans.extractive_reason == "no_results" and ans.answerable is False


class _Reranker:
    name = "fixed"

    def __init__(self, score: float) -> None:
        self.fixed = score

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [self.fixed] * len(texts)


@pytest.mark.parametrize(("score", "answerable"), [(0.9, True), (0.1, False)])
def test_a_reranker_that_passes_nothing_means_nothing_relevant(
    demo_kb: KnowledgeBase, score: float, answerable: bool
) -> None:
    settings = Settings(rerank={"enabled": True, "score_threshold": 0.5})  # type: ignore[arg-type]
    pipeline = RetrievalPipeline(lambda: settings, reranker_factory=lambda cfg: _Reranker(score))
    ans = answer_question(demo_kb, "怎么创建知识库", top_k=2, llm=None, pipeline=pipeline)
    assert ans.answerable is answerable and ans.citations  # the reranker's fallback passages stay
    assert ans.answer.startswith("用 zhiwen index") is answerable
