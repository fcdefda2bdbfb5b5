"""The answer path of #36/#37 through every door: an FAQ entry answered word for word (no LLM
call), a near miss answered as usual with 「您是不是想问：」, ``answer_id`` / ``answer_type`` /
``faq`` / ``suggestions`` on every answer, and every answer in the question log — REST
``/api/v1/qa`` (JSON and SSE), the OpenAI front door (stream and not) and the CLI.

The LLM is the scripted fake server: its request count says whether the LLM was called.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faq_home import (
    ALL_KEY,
    DOCS,
    ENTRIES,
    FAR,
    HIT,
    KB,
    LLM_REPLY,
    NEAR,
    NEAR_SUGGESTED,
    build_manual,
    keyed,
    make_settings,
)
from fastapi.testclient import TestClient

from support.fake_openai import FakeOpenAI
from zhiwen.api.app import create_app
from zhiwen.appkit.context import build_context
from zhiwen.appkit.generic_qa import GENERIC_QA
from zhiwen.conversation import service as conversation
from zhiwen.conversation.request import AskRequest
from zhiwen.kb import close_all
from zhiwen.kb.faq import faq_matcher
from zhiwen.questionlog import LoggedQuestion, LogWindow, QuestionLog

AUTH = {"Authorization": f"Bearer {ALL_KEY}"}
ANSWER = ENTRIES[0].answer


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(LLM_REPLY) as server:
        yield server


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[TestClient]:
    settings = keyed(make_settings(tmp_path_factory.mktemp("faq_doors") / "home", llm_url=fake.base_url))
    build_manual(settings)
    with TestClient(create_app(settings), headers=AUTH) as client:
        yield client
    close_all()


@pytest.fixture
def llm(fake: FakeOpenAI) -> FakeOpenAI:
    fake.reset()
    return fake


def logged(client: TestClient, answer_id: str) -> LoggedQuestion:
    question_log: QuestionLog = client.app.state.question_log  # type: ignore[attr-defined]
    assert question_log.flush()
    return question_log.find(answer_id)


def sse(text: str) -> list[dict[str, Any]]:
    lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def assert_faq_fields(data: dict[str, Any]) -> None:
    assert data["answer_type"] == "faq" and len(data["answer_id"]) == 16
    assert data["faq"] == {"question": ENTRIES[0].question, "score": 1.0, "entry_id": "import-pdf"}
    assert data["suggestions"] == []


# -- REST ---------------------------------------------------------------------------------------
def test_rest_faq_hit_is_the_entry_word_for_word_without_the_llm(http: TestClient, llm: FakeOpenAI) -> None:
    r = http.post("/api/v1/qa", json={"kb": KB, "question": HIT})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["answer"] == ANSWER and llm.calls == 0
    assert_faq_fields(data)
    assert [s["id"] for s in data["sources"]] == ["faq#import-pdf"]
    record = logged(http, data["answer_id"])
    assert (record.kb, record.app, record.question, record.answer_type) == (KB, "qa", HIT, "faq")
    assert (record.faq_id, record.faq_score, record.llm_calls, record.unanswered) == (
        "import-pdf",
        1.0,
        0,
        False,
    )
    assert record.caller and record.caller not in ALL_KEY  # the key's fingerprint, never the key
    assert [s.id for s in record.sources] == ["faq#import-pdf"]


def test_rest_near_miss_answers_as_usual_and_suggests(http: TestClient, llm: FakeOpenAI) -> None:
    data = http.post("/api/v1/qa", json={"kb": KB, "question": NEAR}).json()["data"]
    assert data["answer_type"] == "generated" and data["faq"] is None and llm.calls == 1
    assert data["suggestions"] == [NEAR_SUGGESTED]
    record = logged(http, data["answer_id"])
    assert (record.answer_type, record.llm_calls, record.prompt_tokens, record.completion_tokens) == (
        "generated",
        1,
        11,
        7,
    )


def test_rest_far_question_has_no_suggestions(http: TestClient, llm: FakeOpenAI) -> None:
    data = http.post("/api/v1/qa", json={"kb": KB, "question": FAR}).json()["data"]
    assert data["suggestions"] == [] and data["faq"] is None and data["answer_id"]


def test_rest_sse_done_carries_the_fields_and_is_logged(http: TestClient, llm: FakeOpenAI) -> None:
    r = http.post("/api/v1/qa", json={"kb": KB, "question": HIT, "stream": True})
    events = sse(r.text)
    assert [e["type"] for e in events] == ["sources", "delta", "done"]
    assert events[1]["text"] == ANSWER and llm.calls == 0
    done = events[-1]
    assert_faq_fields(done)
    assert logged(http, done["answer_id"]).answer_type == "faq"


def test_rest_sse_near_miss_counts_the_streamed_llm_call(http: TestClient, llm: FakeOpenAI) -> None:
    events = sse(http.post("/api/v1/qa", json={"kb": KB, "question": NEAR, "stream": True}).text)
    done = events[-1]
    assert done["type"] == "done" and done["suggestions"] == [NEAR_SUGGESTED]
    assert done["answer_type"] == "generated" and llm.calls == 1
    record = logged(http, done["answer_id"])
    assert record.llm_calls == 1 and record.latency_ms > 0


# -- the OpenAI front door ----------------------------------------------------------------------
def test_openai_faq_hit_content_is_word_for_word(http: TestClient, llm: FakeOpenAI) -> None:
    body = {"model": KB, "messages": [{"role": "user", "content": HIT}]}
    reply = http.post("/v1/chat/completions", json=body).json()
    assert reply["choices"][0]["message"]["content"] == ANSWER and llm.calls == 0
    info = reply["zhiwen"]
    assert_faq_fields(info)
    assert info["extractive_reason"] is None and reply["citations"][0]["id"] == "faq#import-pdf"
    assert logged(http, info["answer_id"]).answer_type == "faq"


def test_openai_stream_last_chunk_carries_the_fields(http: TestClient, llm: FakeOpenAI) -> None:
    body = {"model": KB, "messages": [{"role": "user", "content": NEAR}], "stream": True}
    frames = sse(http.post("/v1/chat/completions", json=body).text)
    info = [f for f in frames if "zhiwen" in f][-1]["zhiwen"]
    assert info["answer_type"] == "generated" and info["suggestions"] == [NEAR_SUGGESTED]
    assert logged(http, info["answer_id"]).llm_calls == 1


# -- feedback -----------------------------------------------------------------------------------
def _answer_id(http: TestClient) -> str:
    return str(http.post("/api/v1/qa", json={"kb": KB, "question": HIT}).json()["data"]["answer_id"])


def test_feedback_is_kept_replaced_and_refused(http: TestClient, llm: FakeOpenAI) -> None:
    answer_id = _answer_id(http)
    r = http.post("/api/v1/feedback", json={"answer_id": answer_id, "rating": "down", "reason": "内容过时"})
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {
        "answer_id": answer_id,
        "rating": "down",
        "reason": "outdated",
        "reason_label": "内容过时",
        "comment": None,
    }
    again = http.post("/api/v1/feedback", json={"answer_id": answer_id, "rating": "up"})
    assert again.json()["data"]["rating"] == "up"
    question_log: QuestionLog = http.app.state.question_log  # type: ignore[attr-defined]
    page = question_log.questions(KB, LogWindow())
    listed = next(q for q in page.items if q.record.answer_id == answer_id)
    assert (listed.up, listed.down) == (1, 0)  # one caller, one rating: the later one


def test_feedback_for_an_unknown_answer_is_404(http: TestClient) -> None:
    r = http.post("/api/v1/feedback", json={"answer_id": "0000000000000000", "rating": "up"})
    assert r.status_code == 404 and r.json()["code"] == 3004
    assert "回答不存在" in r.json()["message"]


def test_feedback_needs_read_access_to_the_answers_kb(http: TestClient) -> None:
    answer_id = _answer_id(http)
    other = {"Authorization": "Bearer sk-other-kb-only"}
    r = http.post("/api/v1/feedback", json={"answer_id": answer_id, "rating": "up"}, headers=other)
    assert r.status_code == 403 and r.json()["code"] == 3012 and "无权评价" in r.json()["message"]


def test_feedback_with_a_reason_on_a_thumbs_up_is_422(http: TestClient) -> None:
    answer_id = _answer_id(http)
    r = http.post("/api/v1/feedback", json={"answer_id": answer_id, "rating": "up", "reason": "其他"})
    assert r.status_code == 422 and "原因" in r.json()["message"]


def test_openai_feedback_extension(http: TestClient) -> None:
    answer_id = _answer_id(http)
    r = http.post("/v1/feedback", json={"answer_id": answer_id, "rating": "down", "reason": "off_topic"})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "object": "zhiwen.feedback",
        "answer_id": answer_id,
        "rating": "down",
        "reason": "off_topic",
        "reason_label": "答非所问",
        "comment": None,
    }
    missing = http.post("/v1/feedback", json={"answer_id": "0000000000000000", "rating": "up"})
    assert missing.status_code == 404 and "回答不存在" in missing.json()["error"]["message"]


# -- the service itself -------------------------------------------------------------------------
def test_a_kb_without_faq_entries_skips_the_step(tmp_path: Path) -> None:
    from zhiwen.kb import open_kb

    settings = make_settings(tmp_path / "home")
    kb = open_kb("plain", settings=settings, create=True, embedder="hash")
    kb.index_documents(DOCS, progress=False)
    ctx = build_context(settings, llm=None)
    answer = conversation.ask(GENERIC_QA, AskRequest(question=HIT, kb="plain"), ctx)
    assert answer.answer_type == "extractive" and answer.extractive_reason == "no_llm"
    assert answer.faq is None and answer.suggestions == [] and len(answer.answer_id) == 16
    assert faq_matcher(kb) is None
    close_all()


def test_a_broken_faq_step_costs_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zhiwen.conversation import faq as faq_step
    from zhiwen.kb import open_kb

    settings = make_settings(tmp_path / "home")
    open_kb("plain", settings=settings, create=True, embedder="hash").index_documents(DOCS, progress=False)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the FAQ store is gone")

    monkeypatch.setattr(faq_step, "faq_decision", broken)
    answer = conversation.ask(
        GENERIC_QA, AskRequest(question=HIT, kb="plain"), build_context(settings, llm=None)
    )
    assert answer.answer and answer.faq is None and answer.answer_id
    close_all()
