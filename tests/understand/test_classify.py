"""The generic classifier: rules → embedding centroids → LLM → default, switch and fallbacks."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.embed import EmbeddingCache, get_embedder
from zhiwen.errors import LLMError, LLMTimeout
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.base import ChatResult, Message
from zhiwen.understand.classify import Classification, Classifier

LABELS = ("weather", "sports", "other")
RULES: dict[str, Sequence[str | re.Pattern[str]]] = {
    "weather": ["下雨", "re:气温\\d+", "forecast"],
    "sports": ["足球", "比赛", re.compile(r"NBA")],
}
EXAMPLES = {
    "weather": ["明天天气怎么样", "会不会下雪", "今天风大不大"],
    "sports": ["昨晚球赛谁赢了", "篮球联赛积分榜", "谁是冠军球队"],
}


class ScriptedLLM:
    """A ChatModel double: ``chat_json`` returns / raises the scripted items in order."""

    model = "scripted"

    def __init__(self, *replies: Any, delay_s: float = 0.0) -> None:
        self.replies = list(replies)
        self.delay_s = delay_s
        self.calls: list[list[Message]] = []

    def chat(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        raise NotImplementedError

    def stream(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[str]:
        raise NotImplementedError

    def stream_events(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[Any]:
        raise NotImplementedError

    def chat_json(self, messages: Sequence[Message], **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.replies.pop(0) if self.replies else {"label": "other"}
        if isinstance(reply, BaseException):
            raise reply
        return reply


def make(**kwargs: Any) -> Classifier:
    base: dict[str, Any] = {
        "labels": LABELS,
        "rules": RULES,
        "examples": EXAMPLES,
        "embedder": get_embedder("hash"),
        "threshold": 0.3,
        "default_label": "other",
    }
    base.update(kwargs)
    return Classifier(**base)


# -- rules ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("明天会下雨吗", "weather"),
        ("气温30度热不热", "weather"),
        ("Weather FORECAST for Monday", "weather"),  # keywords are case-insensitive
        ("今晚有足球比赛吗", "sports"),
        ("NBA 总决赛", "sports"),
    ],
)
def test_rules_decide(text: str, label: str) -> None:
    result = make().classify(text)
    assert (result.label, result.method) == (label, "rules")
    assert 0 < result.confidence <= 1
    assert result.fallback_reason is None


def test_rule_tie_goes_to_the_next_stage() -> None:
    result = make(examples={}).classify("下雨天的足球")  # one hit each: no rule decision
    assert result.method == "default"
    assert result.label == "other"


def test_rule_functions_run_first_and_are_validated() -> None:
    clf = make(rule_fns=[lambda t: "sports" if "雨" in t and "球" in t else None])
    assert clf.classify("雨中踢球").label == "sports"
    assert clf.classify("下雨").label == "weather"
    bad = make(rule_fns=[lambda t: "nope"])
    with pytest.raises(ValueError, match="unknown label"):
        bad.classify("x")


def test_unknown_labels_rejected() -> None:
    with pytest.raises(ValueError, match="unknown labels"):
        Classifier(labels=("a", "b"), rules={"c": ["x"]})
    with pytest.raises(ValueError):
        Classifier(labels=())


# -- embedding -------------------------------------------------------------------------------
def test_embedding_centroid_with_threshold() -> None:
    clf = make()
    result = clf.classify("后天天气怎么样")
    assert (result.label, result.method) == ("weather", "embedding")
    assert result.scores["weather"] > result.scores["sports"]
    strict = make(threshold=0.99)
    assert strict.classify("后天天气怎么样").method == "default"


def test_centroids_are_unit_vectors_and_computed_once(tmp_path: Path) -> None:
    embedder = get_embedder("hash")
    calls = {"n": 0}
    original = embedder.embed_query

    def counting(text: str) -> Any:
        calls["n"] += 1
        return original(text)

    embedder.embed_query = counting  # type: ignore[method-assign]
    cache = EmbeddingCache(tmp_path)
    clf = make(embedder=embedder, embedding_cache=cache)
    centroids = clf.centroids()
    assert set(centroids) == {"weather", "sports"}
    for vec in centroids.values():
        assert abs(float((vec**2).sum()) - 1.0) < 1e-5
    clf.classify("随便问问")
    clf.classify("再问一次")
    assert calls["n"] == 6 + 2  # examples once, then one query each
    again = make(embedder=embedder, embedding_cache=cache)
    again.centroids()
    assert calls["n"] == 8  # the example vectors came from the cache


def test_no_embedder_means_default() -> None:
    result = make(embedder=None).classify("股票涨了")
    assert (result.label, result.method, result.fallback_reason) == ("other", "default", None)


# -- LLM -------------------------------------------------------------------------------------
def test_llm_decides_when_offline_stages_do_not() -> None:
    llm = ScriptedLLM({"label": "sports", "confidence": 7})  # a model's number is clamped
    result = make(llm=llm, embedder=None).classify("今晚谁会赢")
    assert (result.label, result.method, result.confidence) == ("sports", "llm", 1.0)
    assert len(llm.calls) == 1
    system = llm.calls[0][0]["content"]
    assert "weather" in system and "JSON" in system


def test_llm_not_called_when_rules_decide() -> None:
    llm = ScriptedLLM({"label": "sports"})
    assert make(llm=llm).classify("下雨").method == "rules"
    assert llm.calls == []


def test_llm_first_and_its_fallback() -> None:
    llm = ScriptedLLM({"label": "sports", "confidence": 0.6}, LLMTimeout("slow"))
    clf = make(llm=llm, llm_first=True)
    first = clf.classify("下雨")
    assert (first.label, first.method) == ("sports", "llm")
    second = clf.classify("下雨")
    assert (second.label, second.method, second.fallback_reason) == ("weather", "rules", "llm_timeout")


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (LLMTimeout("t"), "llm_timeout"),
        (LLMError("5xx", data={"outcome": "http_error"}), "llm_error"),
        (LLMError("bad", data={"outcome": "bad_json"}), "llm_bad_output"),
        (RuntimeError("adapter bug"), "llm_error"),
        ({"label": "cooking"}, "llm_bad_output"),
        (["weather"], "llm_bad_output"),
        ("gibberish", "llm_bad_output"),
    ],
)
def test_llm_failures_fall_back_with_a_reason(reply: Any, reason: str) -> None:
    result = make(llm=ScriptedLLM(reply), embedder=None).classify("今晚谁会赢")
    assert (result.label, result.method, result.fallback_reason) == ("other", "default", reason)


def test_llm_timeout_is_enforced_even_if_the_adapter_ignores_it() -> None:
    llm = ScriptedLLM({"label": "sports"}, delay_s=2.0)
    start = time.perf_counter()
    result = make(llm=llm, embedder=None, llm_timeout_s=0.2).classify("今晚谁会赢")
    assert time.perf_counter() - start < 1.9  # the 0.2 s bound fired, not the 2 s adapter
    assert result.fallback_reason == "llm_timeout"


def test_llm_string_confidence_and_nan() -> None:
    result = make(llm=ScriptedLLM({"label": "sports", "confidence": "high"}), embedder=None).classify("?")
    assert result.confidence == 0.8
    nan = make(llm=ScriptedLLM({"label": "sports", "confidence": float("nan")}), embedder=None).classify("?")
    assert nan.confidence == 0.8


@pytest.mark.parametrize(
    ("fault", "reason"), [("hang", "llm_timeout"), ("500", "llm_error"), ("bad_json", "llm_bad_output")]
)
def test_real_client_faults(fault: str, reason: str) -> None:
    with FakeOpenAI() as fake:
        fake.script(*[Reply.fault(fault, delay_s=5.0)] * 3)
        client = OpenAIChatClient(
            base_url=fake.base_url,
            model="m",
            timeout_s=5.0,
            max_retries=0,
            backoff_base_s=0.01,
            backoff_max_s=0.02,
        )
        try:
            start = time.perf_counter()
            result = make(llm=client, llm_timeout_s=0.5, llm_first=True).classify("下雨")
            assert time.perf_counter() - start < 4.5  # the 0.5 s bound fired, not the 5 s fault
        finally:
            client.close()
    assert (result.label, result.method, result.fallback_reason) == ("weather", "rules", reason)


def test_real_client_success() -> None:
    with FakeOpenAI('{"label": "sports", "confidence": 0.9}') as fake:
        client = OpenAIChatClient(base_url=fake.base_url, model="m", timeout_s=5.0)
        try:
            result = make(llm=client, llm_first=True).classify("下雨")
        finally:
            client.close()
        assert fake.requests[0]["response_format"] == {"type": "json_object"}
    assert (result.label, result.method, result.confidence) == ("sports", "llm", 0.9)


# -- switch, result, concurrency -------------------------------------------------------------
def test_switch_off() -> None:
    llm = ScriptedLLM({"label": "sports"})
    clf = make(llm=llm, enabled=False)
    result = clf.classify("下雨")
    assert (result.label, result.method, result.fallback_reason) == ("other", "default", "disabled")
    assert llm.calls == []
    clf.enabled = True
    assert clf.classify("下雨").label == "weather"


def test_to_dict_and_timing() -> None:
    result = make().classify("下雨")
    assert isinstance(result, Classification)
    assert result.seconds >= 0
    assert result.to_dict()["method"] == "rules"


def test_thread_safe_centroids() -> None:
    clf = make()
    out: list[str] = []
    threads = [
        threading.Thread(target=lambda: out.append(clf.classify("后天天气怎么样").label)) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["weather"] * 8


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_any_text_gets_a_known_label(text: str) -> None:
    result = CLF.classify(text)
    assert result.label in LABELS
    assert 0.0 <= result.confidence <= 1.0
    assert result.method in ("rules", "embedding", "llm", "default")


CLF = make()


def test_embedding_margin_rejects_near_ties() -> None:
    examples = {"weather": ["明天天气怎么样"], "sports": ["明天比赛怎么样"]}
    loose = make(examples=examples, threshold=0.0, rules={})
    assert loose.classify("明天怎么样").method == "embedding"
    strict = make(examples=examples, threshold=0.0, rules={}, margin=0.5)
    result = strict.classify("明天怎么样")
    assert (result.label, result.method) == ("other", "default")
    assert set(result.scores) == {"weather", "sports"}
