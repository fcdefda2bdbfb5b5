"""The structured re-score of retrieved listings, and the constraint checker.

``score = Σ wᵢ·sᵢ / Σ wᵢ`` over the *active* components (the ones the buyer asked about),
then ``× (1 − negation_penalty)`` when the listing hits a soft negation:

* base — the listing's RRF score, divided by the best RRF score among the candidates;
* price — :func:`price_score` on the total price and/or the unit price: continuous, peak at the
  budget midpoint, a small credit up to ``tolerance`` (10 %) outside the range, nothing beyond;
* location — 板块 / district / estate / location-keyword match, fuzzy for estates;
* special — the share of special requirements (学区, 地铁, 满五唯一, 电梯, 精装, 朝南 …) met;
* type — property type, building type (板楼 / 塔楼), rooms and area closeness.

An avoided exact floor (不要一楼 / 不要顶楼) is checked as far as the data allows
(:func:`~zhiwen.apps.listings.floors.check_floor`): a listing in the risky band loses
``negation_penalty × likelihood`` (one over the band's height: slight for a tall building),
counts as a hit (ranked after clean listings), and its reasons say what could not be checked.

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
from typing import Any, Protocol

from rapidfuzz import fuzz

from zhiwen.apps.listings.filters import violations
from zhiwen.apps.listings.floors import FloorCheck, check_floor
from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.settings import ListingsSettings
from zhiwen.apps.listings.vocabulary import AVOIDABLE_FLOORS, NEGATIONS, PROPERTY_TYPES, SPECIALS, VILLA_TYPES

# a soft negation word in a title does not count when it is itself negated ("不临街")
_NEG_PREFIX = re.compile(r"(不|无|没有|没|远离|非|避开)$")


def _default(name: str) -> Any:
    """A field's default as written in :class:`ListingsSettings` (not the environment's value)."""
    return ListingsSettings.model_fields[name].default


class WeightSettings(Protocol):
    """The settings :meth:`Weights.from_settings` reads (any ``ListingsSettings``-like object)."""

    weight_base: float
    weight_price: float
    weight_location: float
    weight_special: float
    weight_type: float
    negation_penalty: float
    price_over_budget_tolerance: float


@dataclass(frozen=True, slots=True)
class Weights:
    base: float = _default("weight_base")
    price: float = _default("weight_price")
    location: float = _default("weight_location")
    special: float = _default("weight_special")
    type: float = _default("weight_type")
    negation_penalty: float = _default("negation_penalty")
    tolerance: float = _default("price_over_budget_tolerance")

    @classmethod
    def from_settings(cls, s: WeightSettings) -> Weights:
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


def floor_checks(req: Requirements, meta: Mapping[str, Any]) -> list[FloorCheck]:
    """What the data says about each exact floor the buyer avoids (一楼, 顶楼)."""
    return [check_floor(neg, meta) for neg in req.negations if neg in AVOIDABLE_FLOORS]


def _hits_one(neg: str, meta: Mapping[str, Any], title: str) -> bool:
    if neg in AVOIDABLE_FLOORS:
        return check_floor(neg, meta).risky
    if neg == "朝北":
        return bool(meta.get("north_only"))
    if neg == "别墅":
        return bool(meta.get("is_villa"))
    if neg in NEGATIONS:
        return _title_has(NEGATIONS[neg][1], title)
    if neg in PROPERTY_TYPES:
        return _title_has(PROPERTY_TYPES[neg], title)
    return len(neg) >= 2 and _title_has(re.escape(neg), title + str(meta.get("xiaoqu") or ""))


def negation_hits(req: Requirements, meta: Mapping[str, Any]) -> list[str]:
    """The soft negations a listing runs into; an avoided floor counts unless the data rules it out."""
    title = str(meta.get("title") or "")
    return [neg for neg in req.negations if _hits_one(neg, meta, title)]


def _special_items(req: Requirements) -> list[str]:
    items = list(req.special)
    if req.elevator:
        items.append("电梯")
    items.extend(req.decoration_in)
    return list(dict.fromkeys(items))


def _item_met(item: str, meta: Mapping[str, Any]) -> bool:
    if item in ("精装", "简装", "毛坯"):
        return meta.get("decoration") == item
    return special_met(item, meta)


def _number(meta: Mapping[str, Any], key: str) -> float | None:
    v = meta.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _price_score(req: Requirements, meta: Mapping[str, Any], tol: float) -> tuple[float, list[str]]:
    """Total price and unit price, each continuous; -1 when the buyer named neither."""
    parts: list[float] = []
    reasons: list[str] = []
    if req.has_price:
        price = _number(meta, "price") or 0.0
        s = price_score(price, req.price_min, req.price_max, tol)
        parts.append(s)
        lo = req.price_min if req.price_min is not None else 0.0
        hi = req.price_max if req.price_max is not None else float("inf")
        if lo <= price <= hi:
            reasons.append(f"价格符合预算 {req.price_text()}")
        else:
            verdict = "接近" if s > 0 else "超出"
            reasons.append(f"价格{verdict}预算 {req.price_text()}（{price:g}万）")
    if req.has_unit_price:
        unit = _number(meta, "unit_price")
        s = 0.0 if unit is None else price_score(unit, req.unit_price_min, req.unit_price_max, tol)
        parts.append(s)
        wanted = req.unit_price_text().removeprefix("单价")
        lo = req.unit_price_min if req.unit_price_min is not None else 0.0
        hi = req.unit_price_max if req.unit_price_max is not None else float("inf")
        if unit is None:
            reasons.append(f"单价未知，无法确认是否{wanted}")
        else:
            verdict = "符合" if lo <= unit <= hi else "接近" if s > 0 else "超出"
            reasons.append(f"单价{verdict}要求 {wanted}（{unit:g}元/㎡）")
    if not parts:
        return -1.0, reasons
    return sum(parts) / len(parts), reasons


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


def _kind_parts(req: Requirements, meta: Mapping[str, Any], parts: list[float], reasons: list[str]) -> None:
    """Property type (别墅, 洋房 …) and building type (板楼, 塔楼, 板塔结合)."""
    if req.property_type:
        pt = req.property_type
        if pt in VILLA_TYPES:
            ok = meta.get("property_type") == pt or (pt == "别墅" and bool(meta.get("is_villa")))
        else:
            ok = _title_has(PROPERTY_TYPES.get(pt, re.escape(pt)), str(meta.get("title") or ""))
        parts.append(1.0 if ok else 0.0)
        if ok:
            reasons.append(f"房屋类型符合: {pt}")
    if req.building_type:
        bt = meta.get("building_type")
        parts.append(1.0 if bt in req.building_type else 0.0)
        if bt in req.building_type:
            reasons.append(f"楼型符合: {bt}")


def _size_parts(req: Requirements, meta: Mapping[str, Any], parts: list[float], reasons: list[str]) -> None:
    """Rooms (halls) and area closeness."""
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
        area = _number(meta, "area")
        if area is None:
            parts.append(0.0)
            return
        parts.append(price_score(area, req.area_min, req.area_max, 0.10))
        a_lo = req.area_min if req.area_min is not None else 0.0
        a_hi = req.area_max if req.area_max is not None else float("inf")
        if a_lo <= area <= a_hi:
            reasons.append(f"面积符合: {req.area_text()}（{area:g}㎡）")


def _type_score(req: Requirements, meta: Mapping[str, Any]) -> tuple[float, list[str]]:
    parts: list[float] = []
    reasons: list[str] = []
    _kind_parts(req, meta, parts, reasons)
    _size_parts(req, meta, parts, reasons)
    if not parts:
        return -1.0, reasons
    return sum(parts) / len(parts), reasons


@dataclass(slots=True)
class Scored:
    score: float
    reasons: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    # soft negations hit, incl. avoided floors the data cannot rule out: ranked after clean listings
    negations: list[str] = field(default_factory=list)


def _negation_factor(
    req: Requirements, meta: Mapping[str, Any], w: Weights, reasons: list[str]
) -> tuple[float, list[str]]:
    """(score multiplier, hits): full penalty for a plain hit, graded by likelihood for floors."""
    hits = negation_hits(req, meta)
    plain = [h for h in hits if h not in AVOIDABLE_FLOORS]
    keep = 1.0 - w.negation_penalty if plain else 1.0
    if plain:
        reasons.append("注意: 可能不符合排除条件 " + "、".join(plain))
    for check in floor_checks(req, meta):
        keep *= 1.0 - w.negation_penalty * check.likelihood
        reasons.append(check.reason)
    return keep, hits


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
    items = _special_items(req)
    met = [i for i in items if _item_met(i, meta)]
    scored_parts = [
        ("price", w.price, _price_score(req, meta, w.tolerance)),
        ("location", w.location, _location_score(req, meta)),
        ("special", w.special, (len(met) / len(items) if items else -1.0, [])),
        ("type", w.type, _type_score(req, meta)),
    ]
    total_w, acc = w.base, w.base * comps["base"]
    for name, weight, (s, part_reasons) in scored_parts:
        if s < 0:
            continue
        comps[name] = s
        acc += weight * s
        total_w += weight
        reasons.extend(part_reasons)
        if name == "special" and met:
            reasons.append("满足特殊需求: " + "、".join(met))
    score = acc / total_w if total_w > 0 else 0.0
    keep, hits = _negation_factor(req, meta, w, reasons)
    score *= keep
    if keep < 1.0:
        comps["negation_penalty"] = round(1.0 - keep, 4)
    reasons.extend(f"已放宽: {label}" for label in relaxed or ())
    return Scored(score=max(0.0, min(1.0, score)), reasons=reasons, components=comps, negations=hits)


__all__ = [
    "Scored",
    "Weights",
    "floor_checks",
    "negation_hits",
    "price_range",
    "price_score",
    "score_listing",
    "special_met",
    "violations",
]
