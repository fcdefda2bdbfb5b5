"""Store filters, relaxation and the constraint checker (:mod:`zhiwen.apps.listings.filters`)."""

from __future__ import annotations

from typing import Any

import pytest

from zhiwen.apps.listings.extract import RELAX_ORDER, extract_rules, hard_filters, relaxable_steps
from zhiwen.apps.listings.filters import violations
from zhiwen.store.filters import parse_filters

SH = {"上海"}


def test_hard_filters_and_relaxation_order() -> None:
    req = extract_rules("浦东三林800万以内的两室，100平以上，不要毛坯，要有电梯", kb_cities=SH)
    f = hard_filters(req)
    assert f["bankuai"] == {"in": ["三林"]}
    assert f["price"] == {"lte": 800.0}
    assert f["rooms"] == 2 and f["elevator"] is True
    assert f["area"] == {"gte": 100.0}
    assert f["decoration"] == {"nin": ["毛坯"]}
    steps = [s for s, _ in relaxable_steps(req)]
    assert steps[0] == "area" and steps.index("price") < steps.index("bankuai")
    relaxed = hard_filters(req, {"area", "price", "bankuai"})
    assert "area" not in relaxed
    assert relaxed["price"] == {"lte": pytest.approx(880.0)}
    assert relaxed["district"] == {"in": ["浦东新区"]}
    assert relaxed["decoration"] == {"nin": ["毛坯"]}  # exclusions are never relaxed


def test_district_or_bankuai_becomes_bankuai_list() -> None:
    f = hard_filters(extract_rules("浦东或者徐家汇", kb_cities=SH))
    assert "徐家汇" in f["bankuai"]["in"] and "三林" in f["bankuai"]["in"]


@pytest.mark.parametrize(
    "question",
    [
        "浦东三林800万以内的两室，不要毛坯，要有电梯",
        "徐汇两三百万，单价6万以下，板楼，不要顶楼",
        "不要浦东的，徐汇或者长宁，2010年以后，南北通透",
        "别墅，1000万以上，不要塔楼",
        "中高楼层，三到四房，100到140平",
    ],
)
def test_every_filter_is_valid_for_the_store(question: str) -> None:
    req = extract_rules(question, kb_cities=SH)
    for step in [frozenset()] + [
        frozenset(s for s, _ in RELAX_ORDER[: i + 1]) for i in range(len(RELAX_ORDER))
    ]:
        parse_filters(hard_filters(req, step))  # raises on an invalid operator / value


META: dict[str, Any] = {
    "city": "上海",
    "district": "徐汇区",
    "bankuai": "田林",
    "price": 280.0,
    "unit_price": 55000,
    "area": 51.0,
    "rooms": 2,
    "halls": 1,
    "floor_level": "中楼层",
    "total_floors": 6,
    "building_type": "板楼",
    "build_year": 1995,
    "decoration": "简装",
    "elevator": False,
}


def test_violations_cover_unit_price_and_building_type() -> None:
    req = extract_rules("徐汇两三百万的两房，单价6万以下，板楼", kb_cities=SH)
    assert violations(META, req) == []
    assert violations({**META, "unit_price": 65000}, req) == ["unit_price_max"]
    assert violations({**META, "building_type": "塔楼"}, req) == ["building_type"]
    assert violations({**META, "price": 310.0}, req) == ["price_max"]
    not_tower = extract_rules("徐汇两房，不要塔楼", kb_cities=SH)
    assert violations({**META, "building_type": "塔楼"}, not_tower) == ["building_type_exclude"]


def test_soft_floor_negations_are_not_violations() -> None:
    req = extract_rules("徐汇两房，不要顶楼", kb_cities=SH)
    assert violations({**META, "floor_level": "高楼层"}, req) == []
    band = extract_rules("徐汇两房，不要高楼层", kb_cities=SH)
    assert violations({**META, "floor_level": "高楼层"}, band) == ["floor_exclude"]
