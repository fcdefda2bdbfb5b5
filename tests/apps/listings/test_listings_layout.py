"""Area, rooms and property type (:mod:`zhiwen.apps.listings.layout`)."""

from __future__ import annotations

from typing import Any

import pytest
from req_check import run_case

CASES: list[tuple[str, dict[str, Any]]] = [
    # -- area ------------------------------------------------------------------------------
    ("120平米左右的三房", {"area_min": 108, "area_max": 132, "rooms": (3, 3)}),
    ("100㎡以上的三室两厅", {"area_min": 100, "area_max": None, "rooms": (3, 3), "halls": 2}),
    ("60平以下的一室一厅", {"area_max": 60, "rooms": (1, 1), "halls": 1}),
    ("80到100平米", {"area_min": 80, "area_max": 100}),
    ("面积不小于90平", {"area_min": 90}),
    ("不超过70平方米的小两房", {"area_max": 70, "rooms": (2, 2)}),
    ("150m²以上的大户型", {"area_min": 150}),
    ("四五十平的一居", {"area_min": 40, "area_max": 50, "rooms": (1, 1)}),
    ("一百来平的两房", {"area_min": 90, "area_max": 110, "rooms": (2, 2)}),
    ("90平多一点", {"area_min": 90, "area_max": 108}),
    ("宽敞一点的房子", {"vague+": ["面积大一些"], "area_min": None}),
    # -- rooms -----------------------------------------------------------------------------
    ("两室一厅", {"rooms": (2, 2), "halls": 1}),
    ("三房两厅", {"rooms": (3, 3), "halls": 2}),
    ("2居室", {"rooms": (2, 2)}),
    ("一室一厅的小公寓", {"rooms": (1, 1), "halls": 1, "property_type": "公寓"}),
    ("2-3房", {"rooms": (2, 3)}),
    ("三到四房", {"rooms": (3, 4)}),
    ("两三房都可以", {"rooms": (2, 3)}),
    ("至少三个房间", {"rooms": (3, None)}),
    ("三房及以上", {"rooms": (3, None)}),
    ("两房以下", {"rooms": (None, 2)}),
    ("3室2厅2卫，长宁", {"rooms": (3, 3), "halls": 2, "districts": ["长宁区"]}),
    ("开间也行", {"rooms": (1, 1)}),
    # -- property type ---------------------------------------------------------------------
    ("联排别墅", {"property_type": "联排别墅"}),
    ("想要洋房", {"property_type": "洋房"}),
    ("不要别墅", {"negations+": ["别墅"], "property_type": None}),
    ("不要公寓，要住宅", {"negations+": ["公寓"], "property_type": None}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_layout(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)
