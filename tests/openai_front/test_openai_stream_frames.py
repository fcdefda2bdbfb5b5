"""The chunk grammar of :func:`completion_frames` for any event sequence (hypothesis)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer
from zhiwen.api.openai.answer import estimate_tokens
from zhiwen.api.openai.stream import StreamState, completion_frames
from zhiwen.appkit.app import Citation
from zhiwen.apps.advisor.event_text import AdvisorEventText
from zhiwen.errors import LLMTimeout

texts = st.text(alphabet=st.characters(blacklist_characters="[]", blacklist_categories=("Cs",)), max_size=30)


def _state(include_usage: bool, **kwargs: Any) -> StreamState:
    return StreamState(
        completion_id="chatcmpl-x",
        created=1,
        model="demo",
        fingerprint="zhiwen-test",
        include_usage=include_usage,
        prompt_texts=["问题"],
        app=None,
        kb="demo",
        **kwargs,
    )


def _parse(frames: list[str]) -> tuple[list[dict[str, Any]], str]:
    assert frames[-1] == "data: [DONE]\n\n"
    assert all(f.startswith("data: ") and f.endswith("\n\n") for f in frames)
    chunks = [json.loads(f[len("data: ") : -2]) for f in frames[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
    return chunks, content


@settings(max_examples=60, deadline=None)
@given(
    deltas=st.lists(texts, max_size=8),
    cited=st.booleans(),
    include_usage=st.booleans(),
    llm=st.booleans(),
    noted=st.booleans(),
)
def test_any_delta_sequence_makes_one_well_formed_message(
    deltas: list[str], cited: bool, include_usage: bool, llm: bool, noted: bool
) -> None:
    sources = [Citation(kb="demo", id="d1", title="来源一", text="片段")] if cited else []
    answer = Answer(
        answer="".join(deltas),
        citations=sources,
        llm_used=llm,
        extractive_reason=None if llm else "no_llm",
        has_offline_note=noted and not llm,
    )
    events = [AppEvent.sources(sources), *(AppEvent.delta(d) for d in deltas), AppEvent.done(answer)]
    chunks, content = _parse(list(completion_frames(iter(events), _state(include_usage), None)))  # type: ignore[arg-type]
    body = "".join(deltas)
    assert content.startswith(body)
    tail = content[len(body) :]
    assert ("[1] 来源一" in tail) is cited  # no marker in the text: the footer brings it
    assert ("离线模式" in tail) is (not llm and not noted)  # the answer says whether it has its note
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    stop = chunks[-2] if include_usage else chunks[-1]
    assert stop["choices"][0]["finish_reason"] == "stop"
    assert [c["id"] for c in stop["citations"]] == (["d1"] if cited else [])
    assert stop["zhiwen"]["llm_used"] is llm
    if include_usage:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == estimate_tokens(
            content
        )
        assert all(c["usage"] is None for c in chunks[:-1])
    else:
        assert all("usage" not in c for c in chunks)


def test_a_failure_mid_stream_is_an_error_frame_then_done() -> None:
    def events() -> Iterator[AppEvent]:
        yield AppEvent("delta", {"text": "前半段"})
        raise LLMTimeout("slow")

    chunks, content = _parse(list(completion_frames(events(), _state(True), None)))  # type: ignore[arg-type]
    assert content == "前半段"
    assert chunks[-1]["error"]["code"] == "llm_timeout" and chunks[-1]["error"]["type"] == "server_error"


def test_advisor_events_become_sections() -> None:
    """The shape of the advisor's non-streamed answer: the discussion first, then the roles."""

    def said(n: int, text: str) -> AppEvent:
        data = {"from_name": "甲", "to_name": "乙", "round": n, "content": text, "tool_calls": []}
        return AppEvent("discussion", data)

    hit = {"kb": "faq", "hits": [{"id": "f1", "title": "预算", "text": "…"}]}
    closing = Answer(
        answer="(the sections)",
        citations=[Citation(kb="faq", id="f1", title="预算", text="…")],
        extractive_reason="no_llm",
        session_id="s",
    )
    events = [
        said(1, "同意"),
        said(2, "补充"),
        AppEvent("role_start", {"role": "financial_advisor", "name": "财务顾问", "icon": "💰"}),
        AppEvent("role_result", {"content": "月供8967元", "llm_used": False, "tool_calls": []}),
        AppEvent("role_start", {"role": "advisor", "name": "购房顾问", "icon": "🏠"}),
        AppEvent("role_result", {"content": "结论", "tool_calls": [{"name": "search_faq", "result": hit}]}),
        AppEvent.done(closing, {"session_id": "s"}),
    ]
    state = _state(False, event_text=AdvisorEventText())
    chunks, content = _parse(list(completion_frames(iter(events), state, None)))  # type: ignore[arg-type]
    assert content.startswith(
        "### 💬 专家讨论\n\n- **甲 → 乙**（第1轮）：同意\n- **甲 → 乙**（第2轮）：补充"
        "\n\n### 💰 财务顾问\n月供8967元\n\n### 🏠 购房顾问\n结论\n\n**来源**\n[1] 预算"
    )
    assert chunks[-1]["citations"][0]["id"] == "f1"
    assert chunks[-1]["zhiwen"]["extractive_reason"] == "no_llm" and chunks[-1]["zhiwen"]["session_id"] == "s"


@given(a=texts, b=texts)
def test_token_estimate_is_monotone_and_subadditive(a: str, b: str) -> None:
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)
    assert estimate_tokens(a + b) >= max(estimate_tokens(a), estimate_tokens(b))
    assert estimate_tokens("知" * len(a)) == len(a)
