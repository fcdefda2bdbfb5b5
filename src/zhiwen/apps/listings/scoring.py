"""Seed 000's structured re-score of retrieved listings, and the constraint checker.

``score = Σ wᵢ·sᵢ / Σ wᵢ`` over the *active* components (the ones the buyer asked about),
then ``× (1 − negation_penalty)`` when the listing hits a soft negation:

* base — the listing's RRF score, divided by the best RRF score among the candidates;
* price — :func:`price_score`: continuous, peak at the budget midpoint, a small credit up to
  ``tolerance`` (10 %) outside the range, nothing beyond;
* location — 板块 / district / estate / location-keyword match, fuzzy for estates;
* special — the share of special requirements (学区, 地铁, 满五唯一, 电梯, 精装, 朝南 …) met;
* type — property type, rooms and area closeness.

So ``match_score`` is always in [0, 1]. :func:`violations` checks a listing against the explicit
constraints (what tests and the benchmark use to count satisfied listings).

Example::

    >>> price_score(900, 800, 1000)
    1.0
    >>> scored = score_listing(meta, req, rrf_norm=0.8, weights=Weights())
    >>> scored.score, scored.reasons
    (0.91, ['价格符合预算 800-1000万', '位置匹配: 浦东新区·三林', '满足特殊需求: 地铁'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from zhiwen.apps.listings.extract import NEGATIONS, PROPERTY_TYPES, SPECIALS, VILLA_TYPES, Requirements
from zhiwen.config import ListingsSettings

# a soft negation word in a title does not count when it is itself negated ("不临街")
_NEG_PREFIX = re.compile(r"(不|无|没有|没|远离|非|避开)$")


_DEFAULTS = ListingsSettings()  # the weights' defaults live in config.py only


@dataclass(frozen=True, slots=True)
class Weights:
    base: float = _DEFAULTS.weight_base
    price: float = _DEFAULTS.weight_price
    location: float = _DEFAULTS.weight_location
    special: float = _DEFAULTS.weight_special
    type: float = _DEFAULTS.weight_type
    negation_penalty: float = _DEFAULTS.negation_penalty
    tolerance: float = _DEFAULTS.price_over_budget_tolerance

    @classmethod
    def from_settings(cls, s: ListingsSettings) -> Weights:
        return cls(
            base=s.weight_base,
            price=s.weight_price,
            location=s.weight_location,
            special=s.weight_special,
            type=s.weight_type,
            negation_penalty=s.negation_penalty,
            tolerance=s.price_over_budget_tolerance,
        )


def price_range(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    """The range whose midpoint is the ideal price.

    Two bounds: as given. Only a ceiling ("800万以内"): the upper half of the budget, as buyers
    spend most of it; cheaper listings are still within budget (score 0.5). Only a floor
    ("500万以上"): from the floor to 1.5 × the floor, above that 0.5.
    """
    if lo is not None and hi is not None:
        return (min(lo, hi), max(lo, hi))
    if hi is not None:
        return (hi * 0.5, hi)
    if lo is not None:
        return (lo, lo * 1.5)
    return None


def price_score(price: float, lo: float | None, hi: float | None, tolerance: float = 0.10) -> float:
    """Continuous price match in [0, 1].

    Inside the range: ``1 − 0.5·|p − mid| / half-width`` (1 at the midpoint, 0.5 at the edges).
    Outside a bound the buyer stated: ``0.3·(1 − overshoot/tolerance)`` while the overshoot is
    below ``tolerance`` (relative to the bound), 0 beyond. Outside a bound the buyer did *not*
    state (cheaper than half a ceiling, dearer than 1.5 × a floor): 0.5, still acceptable.
    """
    rng = price_range(lo, hi)
    if rng is None or price != price:  # NaN
        return 0.0
    a, b = rng
    if a <= price <= b:
        half = (b - a) / 2
        if half <= 0:
            return 1.0
        mid = (a + b) / 2
        return max(0.5, 1.0 - 0.5 * abs(price - mid) / half)
    tol = max(tolerance, 1e-9)
    if price > b:
        if hi is None:
            return 0.5
        over = (price - b) / b if b > 0 else float("inf")
        return 0.0 if over >= tol else 0.3 * (1.0 - over / tol)
    if lo is None:
        return 0.5
    under = (a - price) / a if a > 0 else float("inf")
    return 0.0 if under >= tol else 0.3 * (1.0 - under / tol)


def _title_has(pattern: str, text: str) -> bool:
    """``pattern`` occurs in ``text`` and not right after a negation (不临街 ≠ 临街)."""
    for m in re.finditer(pattern, text):
        if not _NEG_PREFIX.search(text[max(0, m.start() - 2) : m.start()]):
            return True
    return False


def special_met(name: str, meta: Mapping[str, Any]) -> bool:
    """Whether a listing meets one special requirement (metadata flags first, then the title)."""
    title = str(meta.get("title") or "")
    flags = {
        "地铁": meta.get("near_metro"),
        "学区": meta.get("school"),
        "满五唯一": meta.get("man_wu"),
        "满二": meta.get("man_er") or meta.get("man_wu"),
        "朝南": meta.get("facing_south"),
        "南北通透": meta.get("north_south"),
        "电梯": meta.get("elevator"),
        "拎包入住": meta.get("decoration") == "精装" or None,
    }
    if flags.get(name):
        return True
    if name in SPECIALS:
        return _title_has(SPECIALS[name][1], title)
    return name in title


def negation_hits(req: Requirements, meta: Mapping[str, Any]) -> list[str]:
    """The soft negations a listing runs into (顶楼: 高楼层 of a ≤ 7-floor walk-up, or the title)."""
    title = str(meta.get("title") or "")
    hits = []
    for neg in req.negations:
        if neg == "顶楼":
            if (meta.get("floor_level") == "高楼层" and (meta.get("total_floors") or 99) <= 7) or _title_has(
                NEGATIONS["顶楼"][1], title
            ):
                hits.append(neg)
        elif neg == "朝北":
            if meta.get("north_only"):
                hits.append(neg)
        elif neg == "别墅":
            if meta.get("is_villa"):
                hits.append(neg)
        elif neg in NEGATIONS:
            if _title_has(NEGATIONS[neg][1], title):
                hits.append(neg)
        elif neg in PROPERTY_TYPES:
            if _title_has(PROPERTY_TYPES[neg], title):
                hits.append(neg)
        elif len(neg) >= 2 and _title_has(re.escape(neg), title + str(meta.get("xiaoqu") or "")):
            hits.append(neg)
    return hits


def _special_items(req: Requirements) -> list[str]:
    items = list(req.special)
    if req.elevator:
        items.append("电梯")
    for d in req.decoration_in:
        items.append(d)
    return list(dict.fromkeys(items))


def _item_met(item: str, meta: Mapping[str, Any]) -> bool:
    if item in ("精装", "简装", "毛坯"):
        return meta.get("decoration") == item
    return special_met(item, meta)


def _location_score(req: Requirements, meta: Mapping[str, Any]) -> tuple[float, list[str]]:
    parts: list[float] = []
    reasons: list[str] = []
    where = "·".join(x for x in (meta.get("district"), meta.get("bankuai")) if x)
    if req.places:
        bks = set(req.bankuai)
        dists = set(req.districts) | {p.district for p in req.places if p.kind == "bankuai" and p.district}
        if meta.get("bankuai") in bks or (meta.get("district") in req.districts):
            parts.append(1.0)
            reasons.append(f"位置匹配: {where}")
        elif meta.get("district") in dists:
            parts.append(0.7)
            reasons.append(f"位置在同区: {where}")
        else:
            parts.append(0.0)
    if req.estates:
        xq = str(meta.get("xiaoqu") or "")
        best = max(fuzz.partial_ratio(e, xq) for e in req.estates) / 100.0
        parts.append(best)
        if best >= 0.8:
            reasons.append(f"小区匹配: {xq}")
    kws = [k for k in req.location_keywords if k != "地铁"]
    if kws:
        text = f"{meta.get('title') or ''}{meta.get('xiaoqu') or ''}{meta.get('bankuai') or ''}"
        hit = [k for k in kws if k in text]
        parts.append(len(hit) / len(kws))
        if hit:
            reasons.append("位置关键词: " + "、".join(hit))
    if not parts:
        return -1.0, reasons
    return sum(parts) / len(parts), reasons


def _type_score(req: Requirements, meta: Mapping[str, Any]) -> tuple[float, list[str]]:
    parts: list[float] = []
    reasons: list[str] = []
    if req.property_type:
        pt = req.property_type
        if pt in VILLA_TYPES:
            ok = meta.get("property_type") == pt or (pt == "别墅" and bool(meta.get("is_villa")))
        else:
            ok = _title_has(PROPERTY_TYPES.get(pt, re.escape(pt)), str(meta.get("title") or ""))
        parts.append(1.0 if ok else 0.0)
        if ok:
            reasons.append(f"房屋类型符合: {pt}")
    if req.has_rooms:
        rooms = meta.get("rooms")
        lo = req.rooms_min if req.rooms_min is not None else 0
        hi = req.rooms_max if req.rooms_max is not None else 99
        if isinstance(rooms, int) and lo <= rooms <= hi:
            ok_halls = req.halls is None or meta.get("halls") == req.halls
            parts.append(1.0 if ok_halls else 0.7)
            reasons.append(f"户型符合: {meta.get('layout') or rooms}")
        elif isinstance(rooms, int) and min(abs(rooms - lo), abs(rooms - hi)) == 1:
            parts.append(0.4)
        else:
            parts.append(0.0)
    if req.has_area:
        area = meta.get("area")
        if isinstance(area, int | float):
            s = price_score(float(area), req.area_min, req.area_max, 0.10)
            parts.append(s)
            a_lo = req.area_min if req.area_min is not None else 0.0
            a_hi = req.area_max if req.area_max is not None else float("inf")
            if a_lo <= area <= a_hi:
                reasons.append(f"面积符合: {req.area_text()}（{area:g}㎡）")
        else:
            parts.append(0.0)
    if not parts:
        return -1.0, reasons
    return sum(parts) / len(parts), reasons


@dataclass(slots=True)
class Scored:
    score: float
    reasons: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    negations: list[str] = field(default_factory=list)


def score_listing(
    meta: Mapping[str, Any],
    req: Requirements,
    *,
    rrf_norm: float,
    weights: Weights | None = None,
    relaxed: list[str] | None = None,
) -> Scored:
    """Re-score one listing (metadata = typed fields) against the requirements."""
    w = weights or Weights()
    comps: dict[str, float] = {"base": max(0.0, min(1.0, rrf_norm))}
    reasons: list[str] = []
    total_w = w.base
    acc = w.base * comps["base"]
    if req.has_price:
        price = float(meta.get("price") or 0.0)
        s = price_score(price, req.price_min, req.price_max, w.tolerance)
        comps["price"] = s
        acc += w.price * s
        total_w += w.price
        lo = req.price_min if req.price_min is not None else 0.0
        hi = req.price_max if req.price_max is not None else float("inf")
        if lo <= price <= hi:
            reasons.append(f"价格符合预算 {req.price_text()}")
        elif s > 0:
            reasons.append(f"价格接近预算 {req.price_text()}（{price:g}万）")
        else:
            reasons.append(f"价格超出预算 {req.price_text()}（{price:g}万）")
    loc, loc_reasons = _location_score(req, meta)
    if loc >= 0:
        comps["location"] = loc
        acc += w.location * loc
        total_w += w.location
        reasons.extend(loc_reasons)
    items = _special_items(req)
    if items:
        met = [i for i in items if _item_met(i, meta)]
        s = len(met) / len(items)
        comps["special"] = s
        acc += w.special * s
        total_w += w.special
        if met:
            reasons.append("满足特殊需求: " + "、".join(met))
    typ, type_reasons = _type_score(req, meta)
    if typ >= 0:
        comps["type"] = typ
        acc += w.type * typ
        total_w += w.type
        reasons.extend(type_reasons)
    score = acc / total_w if total_w > 0 else 0.0
    hits = negation_hits(req, meta)
    if hits:
        score *= 1.0 - w.negation_penalty
        comps["negation_penalty"] = w.negation_penalty
        reasons.append("注意: 可能不符合排除条件 " + "、".join(hits))
    for label in relaxed or ():
        reasons.append(f"已放宽: {label}")
    return Scored(score=max(0.0, min(1.0, score)), reasons=reasons, components=comps, negations=hits)


def violations(meta: Mapping[str, Any], req: Requirements) -> list[str]:
    """The explicit constraints a listing breaks (empty = satisfies all). Used by tests/bench."""
    out: list[str] = []
    price = meta.get("price")
    if req.price_min is not None and not (isinstance(price, int | float) and price >= req.price_min):
        out.append("price_min")
    if req.price_max is not None and not (isinstance(price, int | float) and price <= req.price_max):
        out.append("price_max")
    if req.cities and meta.get("city") not in req.cities:
        out.append("city")
    if req.places:
        ok = any(
            (p.kind == "district" and meta.get("district") == p.district)
            or (p.kind == "bankuai" and meta.get("bankuai") in p.bankuai)
            for p in req.places
        )
        if not ok:
            out.append("location")
    for p in req.exclude_places:
        if (p.kind == "district" and meta.get("district") == p.district) or (
            p.kind == "bankuai" and meta.get("bankuai") in p.bankuai
        ):
            out.append("exclude_location")
    area = meta.get("area")
    if req.area_min is not None and not (isinstance(area, int | float) and area >= req.area_min):
        out.append("area_min")
    if req.area_max is not None and not (isinstance(area, int | float) and area <= req.area_max):
        out.append("area_max")
    rooms = meta.get("rooms")
    if req.rooms_min is not None and not (isinstance(rooms, int) and rooms >= req.rooms_min):
        out.append("rooms_min")
    if req.rooms_max is not None and not (isinstance(rooms, int) and rooms <= req.rooms_max):
        out.append("rooms_max")
    if req.halls is not None and meta.get("halls") != req.halls:
        out.append("halls")
    if req.elevator is not None and meta.get("elevator") is not req.elevator:
        out.append("elevator")
    if req.decoration_in and meta.get("decoration") not in req.decoration_in:
        out.append("decoration")
    if req.decoration_exclude and meta.get("decoration") in req.decoration_exclude:
        out.append("decoration_exclude")
    if req.floor_in and meta.get("floor_level") not in req.floor_in:
        out.append("floor")
    if req.floor_exclude and meta.get("floor_level") in req.floor_exclude:
        out.append("floor_exclude")
    if req.facing_south and not meta.get("facing_south"):
        out.append("facing_south")
    if req.north_south and not meta.get("north_south"):
        out.append("north_south")
    by = meta.get("build_year")
    if req.build_year_min is not None and not (isinstance(by, int) and by >= req.build_year_min):
        out.append("build_year_min")
    if req.build_year_max is not None and not (isinstance(by, int) and by <= req.build_year_max):
        out.append("build_year_max")
    if req.property_type in VILLA_TYPES:
        ok = (
            bool(meta.get("is_villa"))
            if req.property_type == "别墅"
            else meta.get("property_type") == req.property_type
        )
        if not ok:
            out.append("property_type")
    return out
