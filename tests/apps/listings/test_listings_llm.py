"""The LLM fallback: merge rules + LLM (rules win on explicit numbers), cache, rate limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zhiwen.apps.listings.extract import extract_rules
from zhiwen.apps.listings.understand_llm import LLMExtractor, RateLimiter, merge
from zhiwen.cache import LRU
from zhiwen.errors import LLMTimeout
from zhiwen.llm.base import ChatResult


class FakeLLM:
    """A ChatModel double: scripted JSON for chat_json, counts calls."""

    model = "fake"

    def __init__(self, data: Any = None, error: Exception | None = None) -> None:
        self.data = data
        self.error = error
        self.calls = 0

    def chat(self, messages: Sequence[dict[str, Any]], **_: Any) -> ChatResult:
        self.calls += 1
        if self.error:
            raise self.error
        return ChatResult(content="好的")

    def stream(self, messages: Sequence[dict[str, Any]], **_: Any) -> Any:
        yield "好的"

    def chat_json(self, messages: Sequence[dict[str, Any]], **_: Any) -> Any:
        self.calls += 1
        if self.error:
            raise self.error
        return self.data


def test_merge_rules_win_on_explicit_numbers() -> None:
    rules = extract_rules("徐汇800万以内两房，性价比高", kb_cities={"上海"})
    data = {
        "price_max": 500,
        "price_min": 100,
        "districts": ["静安区"],
        "rooms_min": 3,
        "area_min": 60,
        "special_requirements": ["地铁", "火星"],
        "negations": ["高架"],
        "elevator": True,
        "exclude_decoration": ["毛坯房"],
    }
    req = merge(rules, data)
    assert req.source == "rules+llm"
    assert (req.price_min, req.price_max) == (None, 800.0)  # rules win
    assert req.districts == ["徐汇区"]  # rules win on places
    assert (req.rooms_min, req.rooms_max) == (2, 2)
    assert req.area_min == 60  # the LLM filled a gap
    assert "地铁" in req.special and "火星" not in req.special
    assert "高架" in req.negations and req.elevator is True
    assert req.decoration_exclude == ["毛坯"]


def test_merge_fills_vague_question() -> None:
    rules = extract_rules("想住市中心，别太贵，交通方便", kb_cities={"上海"})
    req = merge(rules, {"districts": ["黄浦", "静安区", "不存在区"], "price_max": "900", "rooms_min": "x"})
    assert req.districts == ["黄浦区", "静安区"]
    assert req.price_max == 900.0 and req.rooms_min is None
    assert req.cities == ["上海"]


def test_merge_ignores_garbage() -> None:
    rules = extract_rules("浦东两房")
    assert merge(rules, None) is rules
    req = merge(extract_rules("浦东两房"), {"price_max": True, "area_min": -5, "districts": "浦东"})
    assert req.price_max is None and req.area_min is None


def test_extractor_caches_and_rate_limits() -> None:
    llm = FakeLLM({"price_max": 600})
    ex = LLMExtractor(llm, cache_size=8, calls_per_minute=2)
    assert ex.extract("要么静安要么徐汇") == {"price_max": 600}
    assert ex.extract("要么静安要么徐汇 ") == {"price_max": 600}  # normalised key: cache hit
    assert llm.calls == 1
    assert ex.extract("问题二") is not None
    assert ex.extract("问题三") is None  # 3rd call in a minute: rate-limited, rules only
    assert llm.calls == 2


def test_extractor_failure_returns_none() -> None:
    ex = LLMExtractor(FakeLLM(error=LLMTimeout("slow")), cache_size=8, calls_per_minute=10)
    assert ex.extract("要么静安要么徐汇") is None
    ex2 = LLMExtractor(FakeLLM(data=["not", "a", "dict"]), cache_size=8, calls_per_minute=10)
    assert ex2.extract("要么静安要么徐汇") is None


def test_rate_limiter_sliding_window() -> None:
    now = [0.0]
    rl = RateLimiter(2, clock=lambda: now[0])
    assert rl.try_acquire() and rl.try_acquire() and not rl.try_acquire()
    now[0] = 60.0
    assert rl.try_acquire()
    assert not RateLimiter(0).try_acquire()


def test_lru_cache_bounded() -> None:
    c = LRU(2, "test_listings_lru")
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # a is now most recent
    c.put("c", 3)
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3
    assert len(c) == 2
    zero = LRU(0, "test_listings_lru0")
    zero.put("a", 1)
    assert zero.get("a") is None
