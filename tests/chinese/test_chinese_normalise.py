"""A question's numerals and units in one written form (:mod:`zhiwen.chinese.normalise`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.chinese.normalise import normalise_question


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("三百万", "300万"),
        ("两室一厅", "2室1厅"),
        ("七宝三房", "七宝3房"),  # place names keep their numerals
        ("五角场", "五角场"),
        ("三林镇", "三林镇"),
        ("１２０㎡", "120平"),
        ("90平方米", "90平"),
        ("1千万以内", "1000万以内"),
        ("2个亿", "20000万"),
        ("1.5亿", "15000万"),
        ("预算600w", "预算600万"),
        ("两万五的月供", "2万五的月供"),  # the amount's own digit is left for the reader of amounts
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


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=9999))
def test_amounts_in_wan(n: int) -> None:
    """N百万 / N千万 / N亿 all end in 万, with the scale applied."""
    assert normalise_question(f"{n}百万") == f"{n * 100}万"
    assert normalise_question(f"{n}千万") == f"{n * 1000}万"
    assert normalise_question(f"{n}亿") == f"{n * 10_000}万"


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            "零一二两俩三四五六七八九十百千万亿个室房平㎡米层年到-至来w七宝 0123456789.，"
        ),
        max_size=16,
    )
)
def test_never_crashes(text: str) -> None:
    assert isinstance(normalise_question(text), str)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_never_crashes_on_any_text(text: str) -> None:
    assert isinstance(normalise_question(text), str)
