"""Money, areas and ratios in Chinese text: where an amount is, what unit it is in, and its value.

An amount is a number (digits or numerals) with an optional scale (亿, 万, w, 千, k) and, spoken,
a digit after the scale (两万五, 2万5千). It is money only where it ends with its number and no
unit gives it another role: 95㎡ is an area, 30年 years, 3.1% and 三成 ratios, 2室 rooms
(:data:`MONEY`). Areas are written ㎡, 平米, 平方米, m², 平 or 方 (:data:`AREA_UNIT`); a down
payment or a share in 成 is tenths (两成 = 0.2, :func:`tenths`; :func:`ratio_text` writes it back).

Example::

    >>> import re
    >>> [money_yuan(m.group()) for m in re.finditer(MONEY, "95㎡ 480万，月收入两万五")]
    [4800000.0, 25000.0]
    >>> money_yuan("300", bare_unit=10_000), money_yuan("3000000", bare_unit=10_000)
    (3000000.0, 3000000.0)
    >>> tenths("两"), ratio_text(0.2), ratio_text(0.35)
    (0.2, '两成', '35%')
"""

from __future__ import annotations

from zhiwen.chinese.numerals import NUMERALS, read_number

_CN = NUMERALS
NUM_AR = r"\d+(?:\.\d+)?"
NUM_CN = rf"[{_CN}]+(?:点[零〇一二三四五六七八九]+)?"
# "两万五" / "2万5千" read the digit after 万 as the next place; "2万一个月" does not
_TAIL = r"(?:[零〇一二两三四五六七八九]|\d(?![\d.]))(?:千)?(?![个平套年月次间天号])"
AMOUNT = rf"(?:{NUM_AR}|{NUM_CN})(?:\s*(?:亿|万|w|W|千|k|K)(?:{_TAIL})?)?"
AMOUNT_WITH_UNIT = rf"(?:(?:{NUM_AR}|{NUM_CN})\s*(?:亿|万|w|W)(?:{_TAIL})?|\d{{5,}}(?:\.\d+)?)"
#: the spellings of square metres (``normalise`` writes them all as 平)
AREA_SPELLINGS = ("m2", "m²", "㎡", "平方米", "平米")
_AREA = r"平方米|平米|平方|平(?!均|时|常)|㎡|m2|m²|方(?!案|式|面|便)"
#: an area's unit after its number (never 平均, 平时, 平常, 方案, 方式, 方面, 方便)
AREA_UNIT = rf"(?:{_AREA})"
# what makes a number something other than money: an area, years, a percentage, a ratio, rooms
NOT_MONEY_UNIT = rf"(?:{_AREA}|年|%|％|成|室|居|层|楼|岁)"
# a money amount must end where its number ends (never 9 of 95㎡, 九十 of 九十五平) and must not be
# followed by a unit that gives it another role (95㎡, 30年, 3.1%, 三成)
_MONEY_END = (
    rf"(?!(?<=[\d.])[\d.]|(?<=[{_CN}])[{_CN}]"
    rf"|(?<=[\d{_CN}])\s*(?:亿|万|千|w|W|k|K)|\s*{NOT_MONEY_UNIT})"
)
#: an amount of money, with or without a scale (300万, 三百万, 8000, 两万五)
MONEY = rf"(?:{AMOUNT}){_MONEY_END}"
#: an amount of money that says it is one: a scale word, or five digits or more (300万, 3000000)
MONEY_WITH_UNIT = rf"(?:{AMOUNT_WITH_UNIT}){_MONEY_END}"
_SCALE_WORDS = ("万", "亿", "千", "w", "W", "k", "K")


def money_yuan(token: str, *, bare_unit: int = 1) -> float | None:
    """An amount in 元. ``bare_unit`` is the unit of a small number written without a scale word:
    where prices are spoken of in 万 (「总价300」 is 300万) pass 10_000; a number of 10,000 or more
    is 元 whatever it says (3000000 stays 3,000,000)."""
    value = read_number(token)
    if value is None:
        return None
    has_unit = any(u in token for u in _SCALE_WORDS)
    return value if has_unit or value >= 10_000 else value * bare_unit


def tenths(token: str) -> float | None:
    """A ratio in 成 (tenths): ``三`` (of 三成) → 0.3, ``2.5`` → 0.25; None when unreadable."""
    value = read_number(token)
    return None if value is None else value / 10


_RATIO_WORDS = dict(enumerate(("一成", "两成", "三成", "四成", "五成", "六成", "七成", "八成", "九成"), 1))


def ratio_text(ratio: float) -> str:
    """0.2 → 两成 (whole tenths, as buyers say a down payment), else a percentage (0.35 → 35%)."""
    whole = round(ratio * 10, 9)
    if whole.is_integer() and int(whole) in _RATIO_WORDS:
        return _RATIO_WORDS[int(whole)]
    return f"{ratio * 100:.2f}".rstrip("0").rstrip(".") + "%"


__all__ = [
    "AMOUNT",
    "AMOUNT_WITH_UNIT",
    "AREA_SPELLINGS",
    "AREA_UNIT",
    "MONEY",
    "MONEY_WITH_UNIT",
    "NOT_MONEY_UNIT",
    "NUM_AR",
    "NUM_CN",
    "money_yuan",
    "ratio_text",
    "tenths",
]
