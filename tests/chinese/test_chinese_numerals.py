"""Chinese numerals (:mod:`zhiwen.chinese.numerals`): whole numbers, amounts, article labels."""

from __future__ import annotations

import cn2an
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.chinese.numerals import SCALE, article_number, cn_to_int, read_number, to_arabic

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
    assert cn_to_int(str(n)) == n


@given(st.integers(min_value=1, max_value=999))
def test_article_labels_round_trip(n: int) -> None:
    """第十二条, 第一百零五条, 第一百八十一条: statute numbering, and digits (第12条)."""
    assert article_number(f"第{to_chinese(n)}条") == n
    assert article_number(f"第{n}条") == n


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("三千五", 3500),
        ("两千", 2000),
        ("3千5", 3500),
        ("一千零五", 1005),
        ("二〇一九", 2019),
        ("一百一", 110),
        ("七宝", None),
    ],
)
def test_cn_to_int_colloquial(text: str, value: int | None) -> None:
    assert cn_to_int(text) == value


def test_article_number_refuses_other_text() -> None:
    assert article_number("第十二章") is None and article_number("十二") is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("300万", 3_000_000),
        ("三百万", 3_000_000),
        ("两万", 20_000),
        ("2万", 20_000),
        ("两万五", 25_000),
        ("1.5万", 15_000),
        ("2万5千", 25_000),
        ("一百五十万", 1_500_000),
        ("1.5亿", 150_000_000),
        ("三千五", 3500),
        ("3.1", 3.1),
        ("三点一", 3.1),
        ("二点五万", 25_000),
        ("8000", 8000),
        ("3,000,000", 3_000_000),
        ("2w", 20_000),
        ("8k", 8000),
    ],
)
def test_read_number(text: str, value: float) -> None:
    assert read_number(text) == pytest.approx(value)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=99_999_999))
def test_read_number_round_trips_cn2an(n: int) -> None:
    assert read_number(cn2an.an2cn(str(n))) == n


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=9999), st.sampled_from(sorted(SCALE)))
def test_read_number_scale(n: int, unit: str) -> None:
    """N万 / N亿 / N千 in digits, N万 / N亿 in numerals (一千千 is no number): N times the scale."""
    assert read_number(f"{n}{unit}") == n * SCALE[unit]
    if unit != "千":
        assert read_number(f"{cn2an.an2cn(str(n))}{unit}") == n * SCALE[unit]


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from("零〇一二两俩三四五六七八九十百千万亿点.,0123456789wk成条第 a"), max_size=12
    )
)
def test_numeral_readers_never_crash(text: str) -> None:
    n = cn_to_int(text)
    assert n is None or n >= 0
    value = read_number(text)
    assert value is None or isinstance(value, float)
    assert isinstance(to_arabic(text), str)
    article_number(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_numeral_readers_never_crash_on_any_text(text: str) -> None:
    cn_to_int(text)
    read_number(text)
    article_number(text)
    assert isinstance(to_arabic(text), str)


def test_to_arabic() -> None:
    assert to_arabic("月供约九千元") == "月供约9000元"
