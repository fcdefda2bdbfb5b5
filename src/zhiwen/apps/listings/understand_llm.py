"""Stage 3 of understanding a question: the LLM fallback for complex questions, merged with the rule result.

Only called when an LLM is configured *and* :func:`zhiwen.apps.listings.extract.assess` found
the question complex (要么…要么, 性价比, 别太贵, few fields from a long question). The LLM
returns JSON; :func:`merge` fills what the rules missed — **rules win on explicit numbers**
(price, area, rooms) and on places, the LLM adds vague wishes (别太贵 → a price ceiling,
市中心 → districts) and requirements. Results are cached (bounded LRU, keyed by the normalised
question) and rate-limited (``llm_calls_per_minute``); over the limit the rules answer alone.

Example::

    extractor = LLMExtractor(llm, cache_size=256, calls_per_minute=30)
    data = extractor.extract("要么在静安要么在徐汇，性价比高一点")   # dict or None
    req = merge(extract_rules(question), data)
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from zhiwen.apps.listings.extract import (
    NEGATIONS,
    PROPERTY_TYPES,
    SPECIALS,
    Requirements,
    normalise_question,
)
from zhiwen.cache import LRU
from zhiwen.chinese.gazetteer import Gazetteer, Place, get_gazetteer
from zhiwen.errors import LLMError
from zhiwen.llm.base import ChatModel
from zhiwen.metrics import FALLBACKS

log = logging.getLogger(__name__)

EXTRACT_PROMPT = """你是房产需求分析助手。请从购房者的问题中提取结构化需求。
只输出一个 JSON 对象，不要任何解释。
字段（没有提到的填 null 或 []）：
- price_min, price_max: 总价区间，单位万元（数字）。“别太贵”“经济实惠”请结合城市给出合理上限。
- districts: 行政区名称列表，如 ["静安区", "徐汇区"]；“市中心”等模糊位置请换成对应的行政区。
- bankuai: 板块/商圈名称列表，如 ["陆家嘴", "徐家汇"]。
- exclude_districts: 用户明确排除的行政区列表。
- property_type: 房屋类型，如 "别墅"、"公寓"、"洋房"，没有则 null。
- area_min, area_max: 面积区间，单位平方米（数字）。“宽敞一些”可给出合理下限。
- rooms_min, rooms_max: 卧室数量区间（整数）。
- elevator: 需要电梯 true，明确不要电梯 false，未提 null。
- decoration: 需要的装修，如 ["精装"]；exclude_decoration: 排除的装修，如 ["毛坯"]。
- special_requirements: 其他需求，从这些词中选：{specials}。
- negations: 用户想避开的东西，从这些词中选：{negations}，或简短中文词。
问题：{question}"""

_NUM_FIELDS = ("price_min", "price_max", "area_min", "area_max")


class RateLimiter:
    """At most ``per_minute`` events in any sliding 60 s window (0 = never allowed)."""

    def __init__(self, per_minute: int, *, clock: Any = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._events: deque[float] = deque()
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        with self._lock:
            now = self._clock()
            while self._events and now - self._events[0] >= 60.0:
                self._events.popleft()
            if len(self._events) >= self.per_minute:
                return False
            self._events.append(now)
            return True


class LLMExtractor:
    """Cached, rate-limited JSON extraction of requirements with a chat model."""

    def __init__(self, llm: ChatModel, *, cache_size: int = 256, calls_per_minute: int = 30) -> None:
        self.llm = llm
        self.cache: LRU[dict[str, Any]] = LRU(cache_size, "listings_llm_extract")
        self.limiter = RateLimiter(calls_per_minute)

    def extract(self, question: str) -> dict[str, Any] | None:
        """The LLM's JSON (a dict) or None (rate-limited, failed, or not an object)."""
        key = normalise_question(question)
        cached = self.cache.get(key)
        if cached is not None:
            return dict(cached)
        if not self.limiter.try_acquire():
            FALLBACKS.labels(kind="listings_extract_rate_limited").inc()
            log.info("listings: LLM extraction rate-limited; rules only")
            return None
        prompt = EXTRACT_PROMPT.format(
            specials="、".join(SPECIALS), negations="、".join(NEGATIONS), question=question
        )
        try:
            from zhiwen.llm import llm_purpose

            with llm_purpose("listings_extract"):
                data = self.llm.chat_json([{"role": "user", "content": prompt}], temperature=0.0)
        except LLMError as exc:
            FALLBACKS.labels(kind="listings_extract_llm_error").inc()
            log.warning("listings: LLM extraction failed (%s); rules only", exc)
            return None
        except Exception as exc:  # a malformed reply must never fail the request
            FALLBACKS.labels(kind="listings_extract_llm_error").inc()
            log.warning("listings: LLM extraction unusable (%s); rules only", exc)
            return None
        if not isinstance(data, dict):
            return None
        self.cache.put(key, dict(data))
        return data


def _num(v: Any, lo: float, hi: float) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if lo <= x <= hi else None


def _int(v: Any, lo: int, hi: int) -> int | None:
    x = _num(v, lo, hi)
    return int(x) if x is not None else None


def _strs(v: Any) -> list[str]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list):
        return []
    return [s.strip() for s in v if isinstance(s, str) and s.strip()][:20]


def _places(names: list[str], kind: str, req: Requirements, gaz: Gazetteer) -> list[Place]:
    cities = set(req.cities) or set(gaz.cities)
    out: list[Place] = []
    for name in names:
        for city in cities:
            if kind == "district":
                d = gaz.normalise_district(name, city)
                if d:
                    out.append(Place("district", city, d))
                    break
            else:
                bk = gaz.canonical_bankuai(city, name)
                if bk:
                    out.append(Place("bankuai", city, gaz.district_of(city, bk, fuzzy=False), (bk,)))
                    break
    return out


def merge(
    rules: Requirements, data: dict[str, Any] | None, *, gazetteer: Gazetteer | None = None
) -> Requirements:
    """Rules + LLM. Explicit numbers and places from the rules win; the LLM fills the gaps."""
    if not data:
        return rules
    gaz = gazetteer or get_gazetteer()
    req = rules
    req.source = "rules+llm"
    for fill in _FILLS:
        fill(req, data, gaz)
    return req


def _fill_price(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    if not req.has_price:
        req.price_min = _num(data.get("price_min"), 1, 1_000_000)
        req.price_max = _num(data.get("price_max"), 1, 1_000_000)
        if req.price_min is not None and req.price_max is not None and req.price_min > req.price_max:
            req.price_min, req.price_max = req.price_max, req.price_min


def _fill_area(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    if not req.has_area:
        req.area_min = _num(data.get("area_min"), 5, 5000)
        req.area_max = _num(data.get("area_max"), 5, 5000)


def _fill_rooms(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    if not req.has_rooms:
        req.rooms_min = _int(data.get("rooms_min"), 0, 20)
        req.rooms_max = _int(data.get("rooms_max"), 0, 20)


def _fill_places(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    """板块 and districts (their cities join the requirements'), then the districts to avoid."""
    if not req.places:
        places = _places(_strs(data.get("bankuai")), "bankuai", req, gaz)
        places += _places(_strs(data.get("districts")), "district", req, gaz)
        req.places = places
        for p in places:
            if p.city not in req.cities:
                req.cities.append(p.city)
    if not req.exclude_places:
        req.exclude_places = _places(_strs(data.get("exclude_districts")), "district", req, gaz)


def _fill_building(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    """The property type and the elevator."""
    if req.property_type is None:
        pt = data.get("property_type")
        if isinstance(pt, str) and pt.strip():
            pt = pt.strip()
            req.property_type = next((k for k in PROPERTY_TYPES if k in pt or pt in k), None)
    if req.elevator is None and isinstance(data.get("elevator"), bool):
        req.elevator = data["elevator"]


def _fill_decoration(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    """Wanted decorations, then unwanted ones (an unwanted one is no longer wanted)."""
    for d in _strs(data.get("decoration")):
        d = d.replace("修", "")
        if d in ("精装", "简装", "毛坯") and d not in req.decoration_in and d not in req.decoration_exclude:
            req.decoration_in.append(d)
    for d in _strs(data.get("exclude_decoration")):
        d = d.replace("修", "").replace("房", "")
        if d in ("精装", "简装", "毛坯") and d not in req.decoration_exclude:
            req.decoration_exclude.append(d)
            if d in req.decoration_in:
                req.decoration_in.remove(d)


def _fill_wishes(req: Requirements, data: dict[str, Any], gaz: Gazetteer) -> None:
    """Special requirements and soft negations, in their canonical words."""
    for s in _strs(data.get("special_requirements")):
        canon = s if s in SPECIALS else next((k for k in SPECIALS if k in s), None)
        if canon and canon not in req.special:
            req.special.append(canon)
    for n in _strs(data.get("negations")):
        canon = n if n in NEGATIONS else next((k for k in NEGATIONS if k in n), n[:6])
        if canon and canon not in req.negations:
            req.negations.append(canon)


# each fills one kind of requirement the rules left open; in this order (places before the
# districts to avoid: the places' cities narrow where those are looked up)
_FILLS: tuple[Callable[[Requirements, dict[str, Any], Gazetteer], None], ...] = (
    _fill_price,
    _fill_area,
    _fill_rooms,
    _fill_places,
    _fill_building,
    _fill_decoration,
    _fill_wishes,
)
