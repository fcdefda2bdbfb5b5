"""Cities, districts / 板块 and excluded places (:mod:`zhiwen.apps.listings.location`)."""

from __future__ import annotations

from typing import Any

import pytest
from req_check import run_case

from zhiwen.apps.listings.extract import extract_rules

CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "我想在上海浦东找一个800万以内，带学区的房子",
        {"districts": ["浦东新区"], "price_max": 800, "special+": ["学区"]},
    ),
    ("浦东三林两室", {"bankuai": ["三林"], "districts": [], "rooms": (2, 2)}),
    ("要么在静安区要么在徐汇区，最好靠近地铁", {"districts": ["静安区", "徐汇区"], "special+": ["地铁"]}),
    ("徐汇或者长宁的三房", {"districts": ["徐汇区", "长宁区"], "rooms": (3, 3)}),
    ("不要浦东的，徐汇或者长宁", {"districts": ["徐汇区", "长宁区"], "exclude": ["浦东新区"]}),
    ("闸北的老公房", {"districts": ["静安区"]}),
    ("莘庄镇附近三房", {"bankuai": ["莘庄"], "rooms": (3, 3)}),
    ("七宝附近两居", {"bankuai": ["七宝"], "rooms": (2, 2)}),
    ("五角场附近精装修两房", {"bankuai": ["五角场"], "decoration_in": ["精装"], "rooms": (2, 2)}),
    ("静安新城的房子", {"bankuai": ["静安新城"], "districts": []}),
    ("陆家嘴金融区的江景房", {"bankuai": ["陆家嘴"], "special+": ["景观"]}),
    ("嘉定新城不要毛坯房", {"bankuai": ["嘉定新城"], "decoration_exclude": ["毛坯"]}),
    ("黄浦区4室以上", {"districts": ["黄浦区"], "rooms": (4, None)}),
    ("杨浦中原小区两房", {"districts": [], "bankuai": ["中原"]}),
    (
        "地铁11号线附近的两房",
        {"special+": ["地铁"], "keywords+": ["11号线"], "location_keywords+": ["11号线"]},
    ),
    ("北京朝阳的房子", {"unknown_city": "北京"}),
    ("想买一个房子，浦东的", {"rooms": (None, None), "districts": ["浦东新区"]}),
    ("淮海路附近的一室", {"location_keywords+": ["淮海路"], "rooms": (1, 1)}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_location(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)


def test_ambiguous_name_resolved_by_kb_cities() -> None:
    sh = extract_rules("龙华附近两房", kb_cities={"上海"})
    assert sh.bankuai == ["龙华"] and sh.cities == ["上海"]
    sz = extract_rules("深圳龙华两房")
    assert sz.districts == ["龙华区"] and sz.cities == ["深圳"]


def test_weak_names_need_city_context() -> None:
    assert extract_rules("和平小区的房子").places == []  # no city: 和平 is a common word
    assert extract_rules("杭州和平的房子").bankuai == ["和平"]
