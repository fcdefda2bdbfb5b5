"""The explicit constraints of :class:`Requirements` → a store filter, and how to relax it.

:func:`hard_filters` writes the filter dict of :mod:`zhiwen.store.filters` over the typed
listing metadata of :mod:`~zhiwen.apps.listings.ingest` (city, district, bankuai, price,
unit_price, area, rooms, halls, elevator, decoration, floor_level, north_south / facing_south,
north_only, build_year, building_type, is_villa, property_type). Soft wishes (negations such as
远离高架, 不要一楼 / 不要顶楼, specials) are not filters: the re-score handles them.

When too few listings pass, the service drops constraints one step at a time in
:data:`RELAX_ORDER` (least important first); :func:`relaxable_steps` lists the steps that
would change this request's filter. Cities, districts, and every exclusion (不要浦东, 不要毛坯,
不要低楼层, 不要塔楼) are never relaxed; the price is widened by the tolerance, never dropped.

Example::

    >>> from zhiwen.apps.listings.extract import extract_rules
    >>> hard_filters(extract_rules("徐汇800万以内的板楼两房，单价8万以下"))
    {'city': {'in': ['上海']}, 'district': {'in': ['徐汇区']}, 'price': {'lte': 800.0}, \
'unit_price': {'lte': 80000}, 'rooms': 2, 'building_type': {'in': ['板楼']}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.vocabulary import VILLA_TYPES
from zhiwen.chinese.gazetteer import get_gazetteer

RELAX_ORDER: tuple[tuple[str, str], ...] = (
    ("area", "面积条件"),
    ("orientation", "朝向条件"),
    ("building_type", "楼型条件"),
    ("build_year", "房龄条件"),
    ("price", "价格条件(放宽10%)"),
    ("bankuai", "板块条件(保留所在区)"),
    ("decoration", "装修条件"),
    ("floor", "楼层条件"),
    ("rooms", "户型条件"),
    ("elevator", "电梯条件"),
    ("property_type", "房屋类型"),
)

Filters = dict[str, Any]


def _bounds(lo: float | None, hi: float | None) -> dict[str, float]:
    cond: dict[str, float] = {}
    if lo is not None:
        cond["gte"] = lo
    if hi is not None:
        cond["lte"] = hi
    return cond


def _location(req: Requirements, relaxed: frozenset[str] | set[str], f: Filters) -> None:
    if req.cities:
        f["city"] = {"in": list(req.cities)}
    elif req.unknown_city:
        f["city"] = {"in": [req.unknown_city]}
    if req.bankuai and "bankuai" not in relaxed:
        # districts named beside 板块 of other districts: expand to their 板块 (OR across both)
        gaz = get_gazetteer()
        names = list(req.bankuai)
        for p in req.places:
            if p.kind == "district" and p.district:
                names.extend(gaz.bankuai(p.city, p.district))
        f["bankuai"] = {"in": sorted(set(names))}
    else:
        all_d = req.districts + [p.district for p in req.places if p.kind == "bankuai" and p.district]
        if all_d:
            f["district"] = {"in": sorted(set(all_d))}
    ex_d = [p.district for p in req.exclude_places if p.kind == "district" and p.district]
    ex_b = [b for p in req.exclude_places if p.kind == "bankuai" for b in p.bankuai]
    if ex_d:
        f.setdefault("district", {})["nin"] = sorted(set(ex_d))
    if ex_b:
        f.setdefault("bankuai", {})["nin"] = sorted(set(ex_b))


def _price(req: Requirements, relaxed: frozenset[str] | set[str], tolerance: float, f: Filters) -> None:
    widen = 1.0 + tolerance if "price" in relaxed else 1.0
    if req.has_price:
        lo = None if req.price_min is None else round(req.price_min / widen, 2)
        hi = None if req.price_max is None else round(req.price_max * widen, 2)
        f["price"] = _bounds(lo, hi)
    if req.has_unit_price:
        lo = None if req.unit_price_min is None else round(req.unit_price_min / widen)
        hi = None if req.unit_price_max is None else round(req.unit_price_max * widen)
        f["unit_price"] = _bounds(lo, hi)


def _layout(req: Requirements, relaxed: frozenset[str] | set[str], f: Filters) -> None:
    if req.has_area and "area" not in relaxed:
        f["area"] = _bounds(req.area_min, req.area_max)
    if req.has_rooms and "rooms" not in relaxed:
        if req.rooms_min is not None and req.rooms_min == req.rooms_max:
            f["rooms"] = req.rooms_min
        else:
            f["rooms"] = _bounds(req.rooms_min, req.rooms_max)
        if req.halls is not None:
            f["halls"] = req.halls
    if "property_type" not in relaxed and req.property_type in VILLA_TYPES:
        if req.property_type == "别墅":
            f["is_villa"] = True
        else:
            f["property_type"] = req.property_type
    if "别墅" in req.negations:
        f["is_villa"] = False


def _building(req: Requirements, relaxed: frozenset[str] | set[str], f: Filters) -> None:
    if req.elevator is not None and "elevator" not in relaxed:
        f["elevator"] = req.elevator
    if req.decoration_in and "decoration" not in relaxed:
        f["decoration"] = {"in": list(req.decoration_in)}
    elif req.decoration_exclude:
        f["decoration"] = {"nin": list(req.decoration_exclude)}
    if "floor" not in relaxed:
        if req.floor_in:
            f["floor_level"] = {"in": list(req.floor_in)}
        elif req.floor_exclude:
            f["floor_level"] = {"nin": list(req.floor_exclude)}
    if req.building_type and "building_type" not in relaxed:
        f["building_type"] = {"in": list(req.building_type)}
    elif req.building_type_exclude:
        f["building_type"] = {"nin": list(req.building_type_exclude)}
    if req.has_build_year and "build_year" not in relaxed:
        f["build_year"] = _bounds(req.build_year_min, req.build_year_max)


def _orientation(req: Requirements, relaxed: frozenset[str] | set[str], f: Filters) -> None:
    if "orientation" not in relaxed:
        if req.north_south:
            f["north_south"] = True
        elif req.facing_south:
            f["facing_south"] = True
    if req.exclude_north:
        f["north_only"] = False


def hard_filters(
    req: Requirements, relaxed: frozenset[str] | set[str] = frozenset(), *, tolerance: float = 0.10
) -> Filters:
    """The explicit constraints as a filter dict (see :mod:`zhiwen.store.filters`)."""
    f: Filters = {}
    _location(req, relaxed, f)
    _price(req, relaxed, tolerance, f)
    _layout(req, relaxed, f)
    _building(req, relaxed, f)
    _orientation(req, relaxed, f)
    return {k: v for k, v in f.items() if v != {}}


def relaxable_steps(req: Requirements) -> list[tuple[str, str]]:
    """The steps of :data:`RELAX_ORDER` that would change this request's filter."""
    have = {
        "area": req.has_area,
        "orientation": bool(req.north_south or req.facing_south),
        "building_type": bool(req.building_type),
        "build_year": req.has_build_year,
        "price": req.has_price or req.has_unit_price,
        "bankuai": bool(req.bankuai),
        "decoration": bool(req.decoration_in),
        "floor": bool(req.floor_in or req.floor_exclude),
        "rooms": req.has_rooms,
        "elevator": req.elevator is not None,
        "property_type": req.property_type in VILLA_TYPES,
    }
    return [(k, label) for k, label in RELAX_ORDER if have[k]]


# -- the same constraints checked on one listing (tests, benchmark, re-score) --------------------
def _num(meta: Mapping[str, Any], key: str) -> float | None:
    v = meta.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _range_violations(meta: Mapping[str, Any], key: str, lo: float | None, hi: float | None) -> list[str]:
    v = _num(meta, key)
    out = []
    if lo is not None and (v is None or v < lo):
        out.append(f"{key}_min")
    if hi is not None and (v is None or v > hi):
        out.append(f"{key}_max")
    return out


def _place_violations(meta: Mapping[str, Any], req: Requirements) -> list[str]:
    out: list[str] = []
    if req.cities and meta.get("city") not in req.cities:
        out.append("city")
    district, bankuai = meta.get("district"), meta.get("bankuai")

    def inside(p: Any) -> bool:
        return bool(
            (p.kind == "district" and district == p.district)
            or (p.kind == "bankuai" and bankuai in p.bankuai)
        )

    if req.places and not any(inside(p) for p in req.places):
        out.append("location")
    out.extend("exclude_location" for p in req.exclude_places if inside(p))
    return out


def _category_violations(meta: Mapping[str, Any], req: Requirements) -> list[str]:
    checks = {
        "halls": req.halls is not None and meta.get("halls") != req.halls,
        "elevator": req.elevator is not None and meta.get("elevator") is not req.elevator,
        "decoration": bool(req.decoration_in) and meta.get("decoration") not in req.decoration_in,
        "decoration_exclude": meta.get("decoration") in req.decoration_exclude,
        "floor": bool(req.floor_in) and meta.get("floor_level") not in req.floor_in,
        "floor_exclude": meta.get("floor_level") in req.floor_exclude,
        "facing_south": bool(req.facing_south) and not meta.get("facing_south"),
        "north_south": bool(req.north_south) and not meta.get("north_south"),
        "building_type": bool(req.building_type) and meta.get("building_type") not in req.building_type,
        "building_type_exclude": meta.get("building_type") in req.building_type_exclude,
    }
    return [name for name, broken in checks.items() if broken]


def _type_violations(meta: Mapping[str, Any], req: Requirements) -> list[str]:
    if req.property_type not in VILLA_TYPES:
        return []
    if req.property_type == "别墅":
        return [] if meta.get("is_villa") else ["property_type"]
    return [] if meta.get("property_type") == req.property_type else ["property_type"]


def violations(meta: Mapping[str, Any], req: Requirements) -> list[str]:
    """The explicit constraints a listing breaks (empty = satisfies all). Used by tests/bench.

    Soft wishes (negations such as 不要顶楼, specials) are not constraints and never appear here.
    """
    out = _range_violations(meta, "price", req.price_min, req.price_max)
    out += _place_violations(meta, req)
    out += _range_violations(meta, "unit_price", req.unit_price_min, req.unit_price_max)
    out += _range_violations(meta, "area", req.area_min, req.area_max)
    out += _range_violations(meta, "rooms", req.rooms_min, req.rooms_max)
    out += _category_violations(meta, req)
    out += _range_violations(meta, "build_year", req.build_year_min, req.build_year_max)
    return out + _type_violations(meta, req)


__all__ = ["RELAX_ORDER", "hard_filters", "relaxable_steps", "violations"]
