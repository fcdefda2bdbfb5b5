"""Budget and unit price (:mod:`zhiwen.apps.listings.price`), incl. the colloquial forms users type."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from req_check import run_case

from zhiwen.apps.listings.extract import extract_rules, hard_filters

CASES: list[tuple[str, dict[str, Any]]] = [
    # -- ranges and bounds that must keep working -------------------------------------------
    ("800-1000万的房子", {"price_min": 800, "price_max": 1000}),
    ("预算800万到1000万", {"price_min": 800, "price_max": 1000}),
    ("八百到一千万的大三房", {"price_min": 800, "price_max": 1000, "rooms": (3, 3)}),
    ("200-300万", {"price_min": 200, "price_max": 300}),
    ("200到300万", {"price_min": 200, "price_max": 300}),
    ("1000万以内", {"price_max": 1000, "price_min": None}),
    ("500万以内", {"price_max": 500, "price_min": None}),
    ("总价不超过500万", {"price_max": 500}),
    ("不超过500万", {"price_max": 500}),
    ("最多600万", {"price_max": 600}),
    ("预算900万左右", {"price_min": 810, "price_max": 990, "price_target": 900}),
    ("总价300万左右的两房", {"price_min": 270, "price_max": 330, "rooms": (2, 2)}),
    ("三百万上下", {"price_min": 270, "price_max": 330}),
    ("500万以上的房子", {"price_min": 500, "price_max": None}),
    ("至少400万", {"price_min": 400}),
    ("一千万以内的别墅", {"price_max": 1000, "property_type": "别墅"}),
    ("预算600w", {"price_max": 600}),
    ("手里有450万", {"price_max": 450}),
    ("1.2亿的独栋别墅", {"price_max": 12000, "property_type": "独栋别墅"}),
    ("两千万以内的大平层", {"price_max": 2000, "property_type": "大平层"}),
    ("500万出头", {"price_min": 500, "price_max": 550}),
    ("首付200万能买什么", {"price_min": None, "price_max": None}),
    ("月供1万，首付100万", {"price_min": None, "price_max": None}),
    # -- defect 1: colloquial approximate amounts -------------------------------------------
    ("两三百万", {"price_min": 200, "price_max": 300}),
    ("预算两三百万，想买个两房", {"price_min": 200, "price_max": 300, "rooms": (2, 2)}),
    ("五六百万的房子有哪些", {"price_min": 500, "price_max": 600}),
    ("一两千万的别墅", {"price_min": 1000, "price_max": 2000, "property_type": "别墅"}),
    ("三五百万能买到什么样的", {"price_min": 300, "price_max": 500}),
    ("两到三百万的一居室", {"price_min": 200, "price_max": 300, "rooms": (1, 1)}),
    # 来 / 左右 / 上下 = the amount ± 10 %
    ("三百来万", {"price_min": 270, "price_max": 330, "price_target": 300}),
    ("300来万的小两房", {"price_min": 270, "price_max": 330, "rooms": (2, 2)}),
    ("四百万左右", {"price_min": 360, "price_max": 440, "price_target": 400}),
    ("300万上下", {"price_min": 270, "price_max": 330}),
    ("总价大概500万", {"price_min": 450, "price_max": 550}),
    # -- defect 3: unit price (元/㎡) -----------------------------------------------------------
    ("单价5万以内的两房", {"unit_price_max": 50000, "rooms": (2, 2), "price_max": None}),
    ("单价6万以下", {"unit_price_max": 60000, "unit_price_min": None, "price_max": None}),
    ("单价不超过5万", {"unit_price_max": 50000, "price_max": None}),
    ("均价8万以内的静安房子", {"unit_price_max": 80000, "price_max": None}),
    ("单价5到6万", {"unit_price_min": 50000, "unit_price_max": 60000, "price_min": None}),
    ("单价5万-6万之间", {"unit_price_min": 50000, "unit_price_max": 60000}),
    ("每平米7万以内的一室", {"unit_price_max": 70000, "rooms": (1, 1)}),
    ("单价在4万以上", {"unit_price_min": 40000, "unit_price_max": None}),
    ("单价不低于3万", {"unit_price_min": 30000}),
    ("单价5万左右的两房", {"unit_price_min": 45000, "unit_price_max": 55000}),
    ("6万一平以内", {"unit_price_max": 60000}),
    ("单价六万以下的两房", {"unit_price_max": 60000, "rooms": (2, 2)}),
    ("单价60000元以内", {"unit_price_max": 60000}),
    (
        "宝山单价4万以下，总价300万以内",
        {"unit_price_max": 40000, "price_max": 300, "price_min": None, "districts": ["宝山区"]},
    ),
    ("两三百万，单价不超过6万", {"price_min": 200, "price_max": 300, "unit_price_max": 60000}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_price(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (1, 2, "一两"),
        (2, 3, "两三"),
        (3, 4, "三四"),
        (4, 5, "四五"),
        (5, 6, "五六"),
        (7, 8, "七八"),
        (8, 9, "八九"),
    ],
)
@pytest.mark.parametrize("scale", ["百", "千"])
def test_every_neighbouring_pair_is_a_range(low: int, high: int, text: str, scale: str) -> None:
    mult = 100 if scale == "百" else 1000
    req = extract_rules(f"预算{text}{scale}万")
    assert (req.price_min, req.price_max) == (low * mult, high * mult)


def test_unit_price_is_a_hard_filter_and_widens_when_relaxed() -> None:
    req = extract_rules("单价6万以下，总价300万以内")
    f = hard_filters(req)
    assert f["unit_price"] == {"lte": 60000} and f["price"] == {"lte": 300.0}
    relaxed = hard_filters(req, {"price"})
    assert relaxed["unit_price"] == {"lte": 66000} and relaxed["price"] == {"lte": 330.0}
    assert hard_filters(extract_rules("单价5到6万"))["unit_price"] == {"gte": 50000, "lte": 60000}


def test_unit_price_text() -> None:
    assert extract_rules("单价6万以下").unit_price_text() == "单价6万元/㎡以下"
    assert extract_rules("单价5到6万").unit_price_text() == "单价5-6万元/㎡"
    assert extract_rules("单价4.5万以上").unit_price_text() == "单价4.5万元/㎡以上"
    assert extract_rules("单价6万以下").summary()["unit_price"] == "单价6万元/㎡以下"
    assert "price_range" in extract_rules("单价6万以下").dimensions()


amounts = st.integers(min_value=10, max_value=9999)


@given(amounts, amounts)
def test_any_digit_range_is_read_in_order(a: int, b: int) -> None:
    req = extract_rules(f"预算{a}-{b}万")
    assert (req.price_min, req.price_max) == (min(a, b), max(a, b))


@given(amounts, st.sampled_from(["左右", "上下", "来"]))
def test_approximate_amount_is_ten_percent_either_side(v: int, word: str) -> None:
    text = f"{v}来万" if word == "来" else f"{v}万{word}"
    req = extract_rules(text)
    assert req.price_min == pytest.approx(v * 0.9, abs=0.01)
    assert req.price_max == pytest.approx(v * 1.1, abs=0.01)
    assert req.price_target == v
