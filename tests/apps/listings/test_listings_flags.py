"""Elevator, decoration, orientation, build year and building type (:mod:`zhiwen.apps.listings.flags`)."""

from __future__ import annotations

from typing import Any

import pytest
from req_check import run_case

from zhiwen.apps.listings.extract import extract_rules, hard_filters, relaxable_steps

CASES: list[tuple[str, dict[str, Any]]] = [
    # -- elevator --------------------------------------------------------------------------
    ("要有电梯", {"elevator": True}),
    ("不要没电梯的", {"elevator": True}),
    ("不要步梯房", {"elevator": True}),
    ("无电梯也行", {"elevator": None}),
    ("不考虑无电梯的房子", {"elevator": True}),
    ("不需要电梯", {"elevator": False}),
    # -- decoration ------------------------------------------------------------------------
    ("精装修的房子", {"decoration_in": ["精装"]}),
    ("不要毛坯", {"decoration_exclude": ["毛坯"], "decoration_in": []}),
    ("带装修的两房", {"decoration_exclude": ["毛坯"], "rooms": (2, 2)}),
    ("简装或者精装都行", {"decoration_in": ["精装", "简装"]}),
    ("不要毛坯的精装两房", {"decoration_exclude": ["毛坯"], "decoration_in": ["精装"], "rooms": (2, 2)}),
    ("除了毛坯都可以，徐汇两房", {"decoration_exclude": ["毛坯"], "decoration_in": []}),
    ("黄浦区豪装的房子", {"decoration_in": ["精装"]}),
    ("奉贤区的毛坯房", {"decoration_in": ["毛坯"], "decoration_exclude": []}),
    # -- orientation -----------------------------------------------------------------------
    ("南北通透的三房", {"north_south": True, "rooms": (3, 3)}),
    ("不要朝北的", {"exclude_north": True}),
    ("要朝南的", {"facing_south": True}),
    # -- build year ------------------------------------------------------------------------
    ("不要老房子", {"build_year_min": 2000}),
    ("房龄10年以内", {"build_year_min": 2009}),
    ("房龄五六年的", {"build_year_min": 2013}),
    ("2010年以后建的", {"build_year_min": 2010}),
    ("2000年以前的老洋房", {"build_year_max": 2000}),
    ("次新房", {"build_year_min": 2010}),
    # -- defect 2: building type -------------------------------------------------------------
    ("不要塔楼", {"building_type_exclude": ["塔楼"], "building_type": [], "negations-": ["塔楼"]}),
    ("板楼三房", {"building_type": ["板楼"], "rooms": (3, 3)}),
    ("想要板楼，通风好一点", {"building_type": ["板楼"]}),
    ("浦东塔楼两房，600万以内", {"building_type": ["塔楼"], "price_max": 600, "districts": ["浦东新区"]}),
    ("板塔结合的也可以", {"building_type": ["板塔结合"]}),
    ("板楼或者板塔结合都行", {"building_type": ["板楼", "板塔结合"]}),
    ("不要塔楼，要板楼", {"building_type": ["板楼"], "building_type_exclude": ["塔楼"]}),
    ("板式楼的两房", {"building_type": ["板楼"], "rooms": (2, 2)}),
    ("不考虑板塔结合", {"building_type_exclude": ["板塔结合"], "building_type": []}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_flags(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)


def test_building_type_is_a_hard_filter_exclusions_never_relaxed() -> None:
    wanted = extract_rules("徐汇板楼两房")
    assert hard_filters(wanted)["building_type"] == {"in": ["板楼"]}
    assert ("building_type", "楼型条件") in relaxable_steps(wanted)
    assert "building_type" not in hard_filters(wanted, {"building_type"})
    excluded = extract_rules("徐汇两房，不要塔楼")
    assert hard_filters(excluded)["building_type"] == {"nin": ["塔楼"]}
    assert "building_type" not in dict(relaxable_steps(excluded))
    # relaxing a wish keeps the exclusion
    both = extract_rules("不要塔楼，要板楼")
    assert hard_filters(both, {"building_type"})["building_type"] == {"nin": ["塔楼"]}


def test_building_type_in_summary_and_dimensions() -> None:
    req = extract_rules("板楼三房")
    assert req.summary()["building_type"] == ["板楼"]
    assert "special_requirements" in req.dimensions()
    assert "板楼" in req.keywords  # still a retrieval keyword, as before
    assert extract_rules("不要塔楼").summary()["exclude_building_type"] == ["塔楼"]
