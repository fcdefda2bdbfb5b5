"""The number check of LLM-written messages: formatting tolerance both ways."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.chinese.number_check import allowed_numbers, check_numbers, extract_numbers, missing_key_numbers

ALLOWED = allowed_numbers(
    [{"monthly_payment": 8967.34, "ratio": 0.4484, "total_interest": 1_128_243.98}], ["月收入2万"]
)


@pytest.mark.parametrize(
    "text",
    [
        "月供8967.34元",
        "月供8,967.34元",
        "月供约8,967元",
        "月供约8967.3元",
        "月供约0.90万元",
        "月供约0.9万",
        "占收入44.84%",
        "占收入约45%",
        "利息约112.82万元",
        "利息1,128,244元",
        "月收入两万元",
        "第1步，第2步",
    ],
)
def test_numbers_from_tools_or_user_pass(text: str) -> None:
    assert check_numbers(text, ALLOWED).ok, extract_numbers(text)


@pytest.mark.parametrize(
    "text", ["月供9500元", "月供8,968.34元", "占收入46%", "利息约120万元", "月供约九千五百元"]
)
def test_invented_numbers_fail(text: str) -> None:
    check = check_numbers(text, ALLOWED)
    assert not check.ok and check.unsupported


def test_key_numbers_must_stay() -> None:
    template = "- 月供：**8,967.34元**\n**还款压力：中**"
    assert missing_key_numbers("月供约0.90万元", template) == []
    assert missing_key_numbers("月供适中", template) == ["8,967.34"]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=100_000, max_value=10**10))
def test_any_rounding_of_a_tool_number_passes(cents: int) -> None:
    value = cents / 100
    allowed = allowed_numbers([{"x": value}])
    for text in (f"{value:.2f}", f"{value:,.2f}", f"{value:,.0f}", f"{value / 10_000:.2f}万"):
        assert check_numbers(text, allowed).ok, text
