"""The official ``openai`` client, unchanged, against zhiwen over real HTTP (offline, no LLM)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import openai
import pytest

QUESTIONS = {
    "demo": "怎么创建知识库？",
    "recipes": "西红柿炒鸡蛋怎么做",
    "listings": "浦东两室，800万以内",
    "advisor": "总价300万，首付三成，贷款30年，利率3.1%，月供多少？",
    "policy": "中国公民去泰国需要签证吗？",
}
APPS = ("advisor", "listings", "policy", "recipes")


def ask(client: Any, model: str, **kwargs: Any) -> Any:
    messages = kwargs.pop("messages", None) or [{"role": "user", "content": QUESTIONS[model]}]
    return client.chat.completions.create(model=model, messages=messages, **kwargs)


def collect(stream: Any) -> tuple[list[Any], str]:
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return chunks, text


def test_models_lists_every_app_and_kb(client: Any) -> None:
    models = {m.id: m for m in client.models.list()}
    assert set(APPS) <= set(models)
    assert {"demo", "policy_visa", "advisor_faq"} <= set(models)
    assert "recipes" in models and list(models).count("recipes") == 1  # the app and its namesake KB
    for app in APPS:
        meta = models[app].model_extra["metadata"]
        assert models[app].object == "model" and models[app].owned_by == "zhiwen"
        assert meta["kind"] == "app" and meta["ready"] is True and meta["description"]
    demo = models["demo"].model_extra["metadata"]
    assert demo["kind"] == "kb" and demo["embedder"] == "hash" and demo["app"] is None
    assert models["recipes"].model_extra["name"] == "菜谱问答"
    assert models["policy_visa"].owned_by == "policy"
    assert client.models.retrieve("demo").id == "demo"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


def test_kb_answer_has_markers_citations_and_usage(client: Any) -> None:
    reply = ask(client, "demo")
    assert reply.object == "chat.completion" and reply.model == "demo"
    text = reply.choices[0].message.content
    assert reply.choices[0].message.role == "assistant" and reply.choices[0].finish_reason == "stop"
    assert "[1]" in text
    citations = reply.model_extra["citations"]
    assert citations[0]["index"] == 1 and citations[0]["title"] == "创建知识库"
    assert "zhiwen index" in citations[0]["snippet"]
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    info = reply.model_extra["zhiwen"]
    assert info["llm_used"] is False and info["extractive_reason"] == "no_llm"  # offline, and says so
    assert "大模型" in text


@pytest.mark.parametrize("model", APPS)
def test_each_app_answers_non_streamed(client: Any, model: str) -> None:
    reply = ask(client, model)
    text = reply.choices[0].message.content
    info = reply.model_extra["zhiwen"]
    assert text.strip() and info["app"] == model and info["llm_used"] is False
    citations = reply.model_extra["citations"]
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    assert markers, text
    assert max(markers) <= len(citations)  # every marker points at a listed source
    assert all(c["index"] == i for i, c in enumerate(citations, 1))
    assert "大模型" in text  # the offline answer says so, in every app


@pytest.mark.parametrize("model", ["demo", *APPS])
def test_streamed_matches_non_streamed(client: Any, model: str) -> None:
    whole = ask(client, model, extra_body={"session_id": f"whole-{model}"})
    chunks, text = collect(ask(client, model, stream=True, extra_body={"session_id": f"stream-{model}"}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    assert [c.choices[0].finish_reason for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert text == whole.choices[0].message.content
    streamed_ids = [c["id"] for c in final.model_extra["citations"]]
    assert streamed_ids == [c["id"] for c in whole.model_extra["citations"]]
    assert final.model_extra["zhiwen"]["llm_used"] is False


def test_advisor_streams_its_roles_as_sections(client: Any) -> None:
    _, text = collect(ask(client, "advisor", stream=True))
    headings = re.findall(r"^### (.+)$", text, flags=re.MULTILINE)
    assert len(headings) >= 2 and any("财务顾问" in h for h in headings)
    assert "8967.34" in text.replace(",", "")  # the loan calculator's monthly payment


def test_include_usage_adds_a_final_usage_chunk(client: Any) -> None:
    chunks, _ = collect(ask(client, "demo", stream=True, stream_options={"include_usage": True}))
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.usage.completion_tokens > 0 and last.usage.prompt_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])
    whole = ask(client, "demo")
    assert last.usage.completion_tokens == whole.usage.completion_tokens
    _, _ = collect(ask(client, "demo", stream=True))  # without the option: no usage chunk
    plain = list(ask(client, "demo", stream=True))
    assert all(c.choices for c in plain)


def test_unknown_model_is_a_404_model_not_found(client: Any) -> None:
    for stream in (False, True):
        with pytest.raises(openai.NotFoundError) as caught:
            client.chat.completions.create(
                model="no-such-kb", messages=[{"role": "user", "content": "你好"}], stream=stream
            )
        assert caught.value.code == "model_not_found"
        assert caught.value.body["type"] == "invalid_request_error"


def test_bad_requests_are_400(client: Any) -> None:
    bad = [
        {"messages": [{"role": "assistant", "content": "你好"}]},
        {"messages": []},
        {"messages": [{"role": "user", "content": "你好"}], "n": 2},
        {"messages": [{"role": "user", "content": "你好"}], "temperature": 5},
        {"messages": [{"role": "user", "content": "   "}]},
    ]
    for body in bad:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="demo", **body)
        assert caught.value.body["type"] == "invalid_request_error", body


def test_multipart_content_and_history(client: Any) -> None:
    messages = [
        {"role": "system", "content": "你是知问的助手"},
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "你好，有什么可以帮你？"},
        {"role": "user", "content": [{"type": "text", "text": "怎么创建知识库？"}]},
    ]
    reply = client.chat.completions.create(model="demo", messages=messages)
    assert reply.model_extra["citations"][0]["title"] == "创建知识库"


def test_embeddings_float_base64_and_batches(client: Any, front_settings: Any) -> None:
    from zhiwen.kb import open_kb

    texts = ["怎么创建知识库", "检索模式", "配置大模型"]
    floats = client.embeddings.create(model="demo", input=texts, encoding_format="float")
    assert [d.index for d in floats.data] == [0, 1, 2] and floats.model == "demo"
    assert floats.usage.prompt_tokens > 0
    decoded = client.embeddings.create(model="demo", input=texts)  # the SDK asks for base64
    expected = open_kb("demo", settings=front_settings).embedder.embed_passages(texts)
    for got in (floats, decoded):
        vectors = np.array([d.embedding for d in got.data], dtype=np.float32)
        assert vectors.shape == (3, 256)
        np.testing.assert_allclose(vectors, expected, rtol=1e-6, atol=1e-7)
    by_embedder = client.embeddings.create(model="hash", input="怎么创建知识库")
    np.testing.assert_allclose(by_embedder.data[0].embedding, expected[0], rtol=1e-6, atol=1e-7)
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="no-such-embedder", input="x")
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="demo", input=[[1, 2, 3]])
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="demo", input="x", dimensions=12)


def test_app_options_reach_the_app(client: Any) -> None:
    question = [{"role": "user", "content": "我在南宁，预算200万，首付40万，月收入1万，帮我深度分析一下"}]
    options = {"options": {"mode": "discussion"}}
    whole = client.chat.completions.create(model="advisor", messages=question, extra_body=options)
    _, streamed = collect(
        client.chat.completions.create(model="advisor", messages=question, stream=True, extra_body=options)
    )
    assert "### 💬 专家讨论" in streamed and streamed == whole.choices[0].message.content
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="advisor", messages=question, extra_body={"options": {"x": 1}})
    assert caught.value.body["param"] == "options.x"
