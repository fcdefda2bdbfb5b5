"""The one SSE helper: event framing, in-band errors that never break the stream, and the default
``BaseApp.stream`` built from ``ask`` (sources → delta → done carrying the same Answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from sse_starlette import EventSourceResponse

from zhiwen.answer.events import collect_stream
from zhiwen.appkit import Answer, AppContext, AppEvent, AskRequest, BaseApp, Citation, Standalone
from zhiwen.appkit.generic_qa import GENERIC_QA
from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.errors import InvalidParameter, KnowledgeBaseNotFound, LLMTimeout, ZhiwenError
from zhiwen.httpkit.sse import SERVER_BUSY_MESSAGE, error_event, sse_stream, to_sse
from zhiwen.retrieve.pipeline import RetrievalPipeline


def collect(events: Iterator[AppEvent], **kwargs: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, str]]:
        return [frame async for frame in sse_stream(events, **kwargs)]

    return [{"event": f["event"], **json.loads(f["data"])} for f in asyncio.run(run())]


def failing_after(n: int, exc: BaseException) -> Iterator[AppEvent]:
    for i in range(n):
        yield AppEvent("delta", {"text": f"第{i}段"})
    raise exc


# -- framing -------------------------------------------------------------------------------------
def test_to_sse_puts_the_type_in_the_event_name_and_the_data() -> None:
    frame = to_sse(AppEvent("delta", {"text": "你好"}))
    assert frame == {"event": "delta", "data": '{"type": "delta", "text": "你好"}'}  # Chinese unescaped
    assert to_sse(AppEvent("done")) == {"event": "done", "data": '{"type": "done"}'}


def test_values_json_cannot_encode_are_stringified() -> None:
    frame = to_sse(AppEvent("done", {"as_of": date(2024, 5, 1), "path": Path("a/b")}))
    assert json.loads(frame["data"]) == {"type": "done", "as_of": "2024-05-01", "path": "a/b"}


@given(
    kind=st.sampled_from(["sources", "delta", "done", "role_start", "role_result", "discussion"]),
    data=st.dictionaries(
        st.text(min_size=1).filter(lambda k: k != "type"),
        st.none() | st.booleans() | st.integers() | st.text(),
        max_size=4,
    ),
)
def test_every_frame_decodes_to_its_event(kind: str, data: dict[str, Any]) -> None:
    frame = to_sse(AppEvent(kind, data))
    assert frame["event"] == kind
    assert json.loads(frame["data"]) == {"type": kind, **data}


# -- errors inside a stream ----------------------------------------------------------------------
def test_a_zhiwen_error_mid_stream_becomes_an_error_event_with_its_code() -> None:
    exc = KnowledgeBaseNotFound("no kb 'demo'", message="知识库不存在：demo")
    frames = collect(failing_after(2, exc))
    assert [f["event"] for f in frames] == ["delta", "delta", "error"]
    assert frames[-1] == {
        "event": "error",
        "type": "error",
        "code": 3004,
        "message": "知识库不存在：demo",
        "data": {"detail": "no kb 'demo'"},
    }


def test_any_other_exception_is_a_1099_without_internals() -> None:
    frames = collect(failing_after(1, ValueError("secret internal state")))
    assert frames[-1] == {
        "event": "error",
        "type": "error",
        "code": 1099,
        "message": SERVER_BUSY_MESSAGE,
        "data": {"detail": "ValueError"},
    }
    assert "secret" not in json.dumps(frames, ensure_ascii=False)


def test_a_failure_before_the_first_event_still_yields_one_error_event() -> None:
    frames = collect(failing_after(0, LLMTimeout("deadline")))
    assert [(f["event"], f["code"]) for f in frames] == [("error", 1001)]


def test_error_event_without_detail_has_no_data() -> None:
    assert error_event(InvalidParameter(message="请指定知识库（kb）")).data == {
        "code": 3003,
        "message": "请指定知识库（kb）",
    }


def test_stream_failures_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("test.events")
    with caplog.at_level(logging.WARNING, logger="test.events"):
        collect(failing_after(1, LLMTimeout("deadline")), log=log)
        collect(failing_after(1, RuntimeError("bug")), log=log)
    levels = [(r.levelname, r.exc_info is not None) for r in caplog.records]
    assert levels == [("WARNING", False), ("ERROR", True)]  # unexpected ones with the traceback


def test_sse_over_http_ends_with_the_error_event() -> None:
    api = FastAPI()

    @api.get("/stream")
    def stream(fail: bool = False) -> EventSourceResponse:
        def events() -> Iterator[AppEvent]:
            yield AppEvent("sources", {"sources": []})
            yield AppEvent("delta", {"text": "你好"})
            if fail:
                raise ZhiwenError("boom")
            yield AppEvent("done", {"llm_used": False})

        return EventSourceResponse(sse_stream(events()))

    with TestClient(api) as client:
        ok = client.get("/stream")
        failed = client.get("/stream", params={"fail": True})
    assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/event-stream")
    assert sse_blocks(ok.text) == [
        ("sources", {"type": "sources", "sources": []}),
        ("delta", {"type": "delta", "text": "你好"}),
        ("done", {"type": "done", "llm_used": False}),
    ]
    assert failed.status_code == 200
    assert [e for e, _ in sse_blocks(failed.text)] == ["sources", "delta", "error"]
    assert sse_blocks(failed.text)[-1][1]["code"] == 1099


def sse_blocks(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.split("\n")
        name = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), None)
        data = "\n".join(ln[5:].strip() for ln in lines if ln.startswith("data:"))
        if name:
            out.append((name, json.loads(data)))
    return out


# -- BaseApp.stream default -----------------------------------------------------------------------
class EchoApp(BaseApp):
    name = "echo"
    title = "回声"
    description = "原样回答"

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        chunk = Chunk(
            id="doc1#0", doc_id="doc1", text="引用的原文" * 100, title="文档一", metadata={"page": 3}
        )
        return Answer(
            answer=f"你问：{request.question}",
            citations=[
                Citation.from_hit(SearchHit(chunk=chunk, score=0.87654321, rerank_score=0.5), kb="demo")
            ],
            llm_used=False,
            extractive_reason="no_llm",
            params={"top_k": 5},
            route="echo",
            data={"intent": "focused"},
        )


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    settings = Settings(home=tmp_path, embedding={"provider": "hash"})
    return AppContext(
        settings=settings, pipeline=RetrievalPipeline.static(settings), llm=None, open_kb=_no_kb
    )


def _no_kb(name: str) -> Any:
    raise KnowledgeBaseNotFound(message=f"知识库不存在：{name}")


def test_default_stream_is_sources_delta_done(ctx: AppContext) -> None:
    app = EchoApp()
    answer = app.ask(AskRequest(question="你好"), ctx)
    events = list(app.stream(AskRequest(question="你好"), ctx))
    assert [e.type for e in events] == ["sources", "delta", "done"]
    (citation,) = events[0].data["sources"]
    assert citation["kb"] == "demo" and citation["id"] == "doc1#0" and citation["title"] == "文档一"
    assert (
        len(citation["text"]) == 300 and citation["score"] == 0.876543 and citation["metadata"] == {"page": 3}
    )
    assert events[1].data == {"text": "你问：你好"}
    streamed = events[2].answer
    assert streamed is not None and streamed.answer_id and streamed.answer_id != answer.answer_id
    same = answer.model_copy(update={"answer_id": streamed.answer_id})
    assert streamed == same == collect_stream(iter(events))
    assert (
        events[2].data
        == streamed.done_fields()
        == {
            "answer_id": streamed.answer_id,
            "answer_type": "extractive",
            "faq": None,
            "suggestions": [],
            "llm_used": False,
            "extractive_reason": "no_llm",
            "params": {"top_k": 5},
            "route": "echo",
            "intent": "focused",
        }
    )
    frames = collect(app.stream(AskRequest(question="你好"), ctx))
    assert [f["event"] for f in frames] == ["sources", "delta", "done"]


def test_default_stream_of_an_app_that_fails_ends_in_an_error_event(ctx: AppContext) -> None:
    class BrokenApp(EchoApp):
        def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
            raise InvalidParameter(message="问题不能为空")

    frames = collect(BrokenApp().stream(AskRequest(question=""), ctx))
    assert [(f["event"], f["code"], f["message"]) for f in frames] == [("error", 3003, "问题不能为空")]


def test_base_app_defaults() -> None:
    app = EchoApp()
    assert app.router() is None and app.cli() is None and app.formats() == {}
    assert app.sniff(Path("x")) is None and app.default_kb is None and app.serves("echo")
    assert not app.serves("recipes") and repr(app) == "<app echo>"


# -- the typed events and the one citation --------------------------------------------------------
def test_typed_events_carry_their_objects() -> None:
    citation = Citation(kb="demo", id="d1", title="快速开始", score=0.5, metadata={"section": "安装"})
    sources = AppEvent.sources([citation])
    assert sources.citations == (citation,)
    assert sources.data["sources"][0] == {
        "kb": "demo",
        "id": "d1",
        "title": "快速开始",
        "text": "",
        "score": 0.5,
        "rerank_score": None,
        "metadata": {"section": "安装"},
        "source": None,
        "page": None,
        "page_end": None,
        "section": "安装",
        "label": "《快速开始》",
    }
    answer = Answer(answer="先安装。", citations=[citation], llm_used=True, route="general")
    events = [sources, AppEvent.delta("先"), AppEvent.delta("安装。"), AppEvent.done(answer)]
    assert [e.text for e in events] == ["", "先", "安装。", ""]
    assert events[-1].data == {
        "answer_id": "",  # the conversation service stamps it
        "answer_type": "generated",
        "faq": None,
        "suggestions": [],
        "llm_used": True,
        "extractive_reason": None,
        "params": {},
        "route": "general",
    }
    assert collect_stream(iter(events)) is answer
    folded = collect_stream(iter(events[:-1]))  # a stream cut before done: its text and sources
    assert folded.answer == "先安装。" and folded.citations == [citation]


def test_a_document_citation_points_at_its_best_passage() -> None:
    doc = Document(id="law", title="出境入境管理法", text="全文", metadata={"format": "pdf"})
    weak = SearchHit(Chunk("law#1", "law", "弱", metadata={"page": 2}), score=0.1)
    where = {"page": 12, "section": "第二章"}
    best = SearchHit(Chunk("law#2", "law", "第十二条……", metadata=where), score=0.9)
    citation = Citation.from_parent(ParentHit(doc, 0.87654321, [weak, best]), kb="laws")
    assert (citation.kb, citation.id, citation.score) == ("laws", "law", 0.876543)
    assert citation.text == "第十二条……"
    assert (citation.page, citation.section, citation.label) == (12, "第二章", "《出境入境管理法》第12页")


def test_generic_qa_needs_a_kb(ctx: AppContext) -> None:
    with pytest.raises(InvalidParameter) as info:
        GENERIC_QA.ask(AskRequest(question="你好"), ctx)
    assert info.value.code == 3003 and info.value.message == "请指定知识库（kb）"
