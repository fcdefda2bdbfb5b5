"""Money, areas, ratios (:mod:`zhiwen.chinese.quantities`), days (:mod:`zhiwen.chinese.dates`)."""

from __future__ import annotations

import contextlib
import re
from datetime import date

import cn2an
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.chinese.dates import read_day
from zhiwen.chinese.quantities import AREA_UNIT, MONEY, MONEY_WITH_UNIT, money_yuan, ratio_text, tenths


def money_in(text: str) -> list[float | None]:
    return [money_yuan(m.group()) for m in re.finditer(MONEY, text)]


@pytest.mark.parametrize(
    ("text", "amounts"),
    [
        ("95㎡ 480万", [4_800_000]),  # the area is no money
        ("贷款30年，利率3.1%，首付三成", []),
        ("月收入两万五", [25_000]),
        ("九十五平，三百万", [3_000_000]),
        ("2万5千", [25_000]),
        ("1.5亿", [150_000_000]),
    ],
)
def test_money_is_told_from_other_quantities(text: str, amounts: list[float]) -> None:
    assert money_in(text) == amounts


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=9_999))
def test_money_with_a_scale_word(n: int) -> None:
    """N万 is money whether N is written in digits or numerals, and reads as N × 10,000 元
    (from 一万万 on, people say 亿)."""
    for written in (f"{n}万", f"{cn2an.an2cn(str(n))}万"):
        m = re.fullmatch(MONEY_WITH_UNIT, written)
        assert m is not None and money_yuan(m.group()) == n * 10_000


def test_bare_amounts_take_the_unit_given() -> None:
    assert money_yuan("300", bare_unit=10_000) == 3_000_000  # 总价300: 300万
    assert money_yuan("3000000", bare_unit=10_000) == 3_000_000  # already 元
    assert money_yuan("8000") == 8000 and money_yuan("两万") == 20_000
    assert money_yuan("") is None


@given(st.integers(min_value=1, max_value=9))
def test_tenths_round_trip(n: int) -> None:
    """两成 ↔ 0.2: the ratio written back is read as the same ratio."""
    word = ratio_text(n / 10)
    assert word.endswith("成") and tenths(word.removesuffix("成")) == pytest.approx(n / 10)


def test_ratio_text_falls_back_to_percent() -> None:
    assert (ratio_text(0.35), ratio_text(0.125), ratio_text(1.0)) == ("35%", "12.5%", "100%")


@pytest.mark.parametrize(
    ("text", "area"),
    [("89平", True), ("89㎡", True), ("89平方米", True), ("89平均", False), ("3方案", False)],
)
def test_area_units(text: str, area: bool) -> None:
    assert (re.match(rf"\d+{AREA_UNIT}", text) is not None) is area


@pytest.mark.parametrize(
    "text", ["2026-01-15", "2026/1/15", "2026.01.15", "20260115", "2026年1月15日", " 2026年01月15日 "]
)
def test_read_day(text: str) -> None:
    assert read_day(text) == date(2026, 1, 15)


@given(st.dates(min_value=date(1000, 1, 1)))
def test_read_day_round_trips(day: date) -> None:
    for text in (
        day.isoformat(),
        f"{day.year}年{day.month}月{day.day}日",
        f"{day.year}/{day.month}/{day.day}",
    ):
        assert read_day(text) == day


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
def test_read_day_only_raises_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        read_day(text)
