"""Chinese numerals and question normalisation (:mod:`zhiwen.apps.listings.numerals`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.apps.listings.numerals import cn_to_int, normalise_question

_DIGITS = "零一二三四五六七八九"


def to_chinese(n: int) -> str:
    """1..9999 written the standard way: 1005 → 一千零五, 15 → 十五, 110 → 一百一十."""
    out, gap = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        d = n // value % 10
        if d:
            out += (
                ("零" if gap else "") + ("" if (unit == "十" and d == 1 and not out) else _DIGITS[d]) + unit
            )
            gap = False
        elif out:
            gap = True
    if n % 10:
        out += ("零" if gap else "") + _DIGITS[n % 10]
    return out


@given(st.integers(min_value=1, max_value=9999))
def test_cn_to_int_round_trips(n: int) -> None:
    assert cn_to_int(to_chinese(n)) == n


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("三千五", 3500),
        ("两千", 2000),
        ("3千5", 3500),
        ("一千零五", 1005),
        ("二〇一九", 2019),
        ("七宝", None),
    ],
)
def test_cn_to_int_colloquial(text: str, value: int | None) -> None:
    assert cn_to_int(text) == value


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("三百万", "300万"),
        ("两室一厅", "2室1厅"),
        ("七宝三房", "七宝3房"),  # place names keep their numerals
        ("五角场", "五角场"),
        ("三林镇", "三林镇"),
        ("１２０㎡", "120平"),
        ("1千万以内", "1000万以内"),
        ("2个亿", "20000万"),
        ("预算600w", "预算600万"),
        # colloquial pairs → ranges (defect: 两三百万 was read as 2300万)
        ("两三百万", "200-300万"),
        ("一两千万", "1000-2000万"),
        ("五六百万", "500-600万"),
        ("三五百万", "300-500万"),
        ("四五十平", "40-50平"),
        ("两三房", "2-3房"),
        ("五六万一平", "5-6万1平"),
        # a single digit ranged against a scaled one takes its scale
        ("两到三百万", "200到300万"),
        ("2-3百万", "200-300万"),
        ("八百到一千万", "800到1000万"),
        # 来: the numeral is converted, the word stays for the price reader
        ("三百来万", "300来万"),
        ("二两", "二两"),  # not a pair, and no unit: left alone
    ],
)
def test_normalise_question(text: str, out: str) -> None:
    assert normalise_question(text) == out
