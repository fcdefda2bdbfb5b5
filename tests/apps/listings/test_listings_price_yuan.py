"""A total price given in 元 is read as 万元, never dropped (#30: 「预算8000000」 once lost its budget
silently); unit prices stay in 元/㎡."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.apps.listings.extract import extract_rules, hard_filters


@pytest.mark.parametrize(
    ("question", "price", "unit_price"),
    [
        ("浦东预算8000000的两房", {"lte": 800.0}, None),
        ("浦东总价8000000元以内两房", {"lte": 800.0}, None),
        ("预算3000000到5000000的两房", {"gte": 300.0, "lte": 500.0}, None),
        ("浦东首付1000000，总价500万以内", {"lte": 500.0}, None),  # 首付 is not the budget
        ("浦东单价120000以下", None, {"lte": 120000}),
        ("浦东1000000元/平以下", None, {"lte": 1000000}),
        ("浦东800万以内", {"lte": 800.0}, None),
    ],
)
def test_yuan_totals(
    question: str, price: dict[str, float] | None, unit_price: dict[str, float] | None
) -> None:
    flt = hard_filters(extract_rules(question))
    assert flt.get("price") == price and flt.get("unit_price") == unit_price


@given(st.integers(min_value=10, max_value=99_999))
def test_any_budget_in_yuan_equals_the_same_in_wan(wan: int) -> None:
    in_yuan = hard_filters(extract_rules(f"徐汇预算{wan * 10_000}的两房")).get("price")
    in_wan = hard_filters(extract_rules(f"徐汇预算{wan}万的两房")).get("price")
    assert in_yuan == in_wan == {"lte": float(wan)}
