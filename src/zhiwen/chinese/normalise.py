"""A question's numerals and units in one written form, so the extractors see one spelling.

:func:`normalise_question` applies NFKC (full-width digits), unifies dashes and square-metre
spellings (㎡, 平米, 平方米 → 平), and rewrites numerals that stand before a unit (万, 室, 平, 层,
年 …). Numerals elsewhere stay as they are, so place names such as 七宝, 三林 and 五角场 survive.
Colloquial approximate pairs become ranges before anything else: ``两三百万`` → ``200-300万``,
``一两千万`` → ``1000-2000万``, ``三五百万`` → ``300-500万``, ``三四十平`` → ``30-40平``,
``两三房`` → ``2-3房``; and a single digit ranged against a scaled one takes the same scale:
``两到三百万`` → ``200到300万``. Amounts end in 万 (1千万 → 1000万, 2个亿 → 20000万, 600w → 600万).

Example::

    >>> normalise_question("两三百万的两室一厅，１２０㎡")
    '200-300万的2室1厅,120平'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from zhiwen.chinese.numerals import DIGITS, NUMERALS, PLACES, SCALE, cn_to_int
from zhiwen.chinese.quantities import AREA_SPELLINGS

_NUMERAL = NUMERALS + "俩"
# what may follow a numeral for it to be read as a number (a unit, a range, a qualifier)
_AFTER = (
    r"万|亿|千|百|个亿|室|房|居|厅|卫|卧|平|㎡|层|楼|年|套|米|方|多|来|出头|左右|上下|号线|间|个|"
    r"到|至|-|元|块|以内|以下|以上|之内"
)
# a Chinese numeral is converted only before a unit, so 七宝 / 三林 / 五角场 stay place names
_CN_NUM_RE = re.compile(
    rf"(?<![\u4e00-\u9fff][{_NUMERAL}])"
    rf"([{_NUMERAL}\d]*[{_NUMERAL}][{_NUMERAL}\d]*)"
    rf"(?=\s*(?:{_AFTER}))"
)
# "两三百万", "一两千万", "五六万", "三四十平", "两三房": two neighbouring digits = a range
_PAIR_RE = re.compile(
    rf"(?<![{_NUMERAL}\d])([一二两三四五六七八])([二两三四五六七八九])([十百千])?"
    r"(?=\s*(?:万|亿|室|房|居|卧|平|方|层|楼|年|套|个|间|元|块))"
)
# "两到三百万", "2-3百万": the left end takes the right end's scale
_SCALED_RANGE_RE = re.compile(
    rf"(?<![{_NUMERAL}\d.])([一二两三四五六七八九]|\d)\s*(-|到|至)\s*([一二两三四五六七八九]|\d)\s*([十百千])"
)
_WAN = SCALE["万"]


def _digit(ch: str) -> int:
    return int(ch) if ch.isdigit() else DIGITS[ch]


def _expand_pair(m: re.Match[str]) -> str:
    a, b = DIGITS[m.group(1)], DIGITS[m.group(2)]
    if b != a + 1 and (a, b) != (3, 5):  # neighbours, or the idiom 三五; "二两" is no pair
        return m.group(0)
    scale = PLACES.get(m.group(3) or "", 1)
    return f"{a * scale}-{b * scale}"


def _scale_range(m: re.Match[str]) -> str:
    scale = PLACES[m.group(4)]
    return f"{_digit(m.group(1)) * scale}{m.group(2)}{_digit(m.group(3)) * scale}"


def _to_digits(m: re.Match[str]) -> str:
    n = cn_to_int(m.group(1))
    return m.group(1) if n is None else str(n)


def _in_wan(times: int) -> Callable[[re.Match[str]], str]:
    """An amount in 千万 / 百万 / 亿 written in 万 (2百万 → 200万, 100亿 → 1000000万: never in an
    exponent, which ``:g`` writes from a million on)."""
    return lambda m: f"{float(m.group(1)) * times:f}".rstrip("0").rstrip(".") + "万"


def normalise_question(text: str) -> str:
    """NFKC, unified dashes and ㎡, colloquial pairs → ranges, numerals before units → digits."""
    t = unicodedata.normalize("NFKC", text)
    for spelling in AREA_SPELLINGS:
        t = t.replace(spelling, "平")
    t = re.sub(r"[—–－~～〜]", "-", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = _PAIR_RE.sub(_expand_pair, t)
    t = _SCALED_RANGE_RE.sub(_scale_range, t)
    t = _CN_NUM_RE.sub(_to_digits, t)
    # 1千万 / 2百万 after digit conversion: "1千" is not caught above when all digits
    t = re.sub(r"(\d+(?:\.\d+)?)\s*千\s*万", _in_wan(PLACES["千"]), t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*百\s*万", _in_wan(PLACES["百"]), t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*个?\s*亿", _in_wan(SCALE["亿"] // _WAN), t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*[wW](?![a-zA-Z])", r"\1万", t)
    return t


__all__ = ["normalise_question"]
