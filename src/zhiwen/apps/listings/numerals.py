"""Chinese numerals in a home-buyer's question → Arabic digits, so the extractors see one form.

:func:`normalise_question` applies NFKC (full-width digits), unifies dashes and ㎡ spellings,
and rewrites numerals that stand before a unit (万, 室, 平, 层, 年 …). Numerals elsewhere stay
as they are, so place names such as 七宝, 三林 and 五角场 survive. Colloquial approximate
pairs become ranges before anything else: ``两三百万`` → ``200-300万``, ``一两千万`` →
``1000-2000万``, ``三五百万`` → ``300-500万``, ``三四十平`` → ``30-40平``, ``两三房`` →
``2-3房``; and a single digit ranged against a scaled one takes the same scale:
``两到三百万`` → ``200到300万``.

Example::

    >>> normalise_question("两三百万的两室一厅，１２０㎡")
    '200-300万的2室1厅,120平'
    >>> cn_to_int("一千二百"), cn_to_int("三千五")
    (1200, 3500)
"""

from __future__ import annotations

import re
import unicodedata

CN_DIGITS: dict[str, int] = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4,
                             "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
CN_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000}
# a decimal number as a regex group (the extractors' building block)
NUM = r"(\d+(?:\.\d+)?)"

_NUMERAL = "零〇一二两俩三四五六七八九十百千"
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


def cn_to_int(s: str) -> int | None:
    """``一千二百`` → 1200, ``两千`` → 2000, ``十五`` → 15, ``3千5`` → 3500 (mixed digits too)."""
    total, current, last_unit = 0, None, 1
    zero_gap = False  # "一千零五": a 零 after a unit makes the trailing digit literal (1005)
    for ch in s:
        if ch in "零〇" and current is None:
            zero_gap = True
        elif ch.isdigit():
            current = (current or 0) * 10 + int(ch)
        elif ch in CN_DIGITS:
            current = CN_DIGITS[ch] if current is None else current * 10 + CN_DIGITS[ch]
        elif ch in CN_UNITS:
            unit = CN_UNITS[ch]
            total += (1 if current is None else current) * unit
            current, last_unit, zero_gap = None, unit, False
        else:
            return None
    if current is not None:
        # "三千五" = 3500: a trailing digit after a unit is one unit lower
        scaled = last_unit >= 100 and current < 10 and not zero_gap
        total += current * (last_unit // 10) if scaled else current
    return total


def _digit(ch: str) -> int:
    return int(ch) if ch.isdigit() else CN_DIGITS[ch]


def _expand_pair(m: re.Match[str]) -> str:
    a, b = CN_DIGITS[m.group(1)], CN_DIGITS[m.group(2)]
    if b != a + 1 and (a, b) != (3, 5):  # neighbours, or the idiom 三五; "二两" is no pair
        return m.group(0)
    scale = CN_UNITS.get(m.group(3) or "", 1)
    return f"{a * scale}-{b * scale}"


def _scale_range(m: re.Match[str]) -> str:
    scale = CN_UNITS[m.group(4)]
    return f"{_digit(m.group(1)) * scale}{m.group(2)}{_digit(m.group(3)) * scale}"


def _to_digits(m: re.Match[str]) -> str:
    n = cn_to_int(m.group(1))
    return m.group(1) if n is None else str(n)


def normalise_question(text: str) -> str:
    """NFKC, unified dashes and ㎡, colloquial pairs → ranges, numerals before units → digits."""
    t = unicodedata.normalize("NFKC", text)
    for spelling in ("m2", "m²", "㎡", "平方米", "平米"):
        t = t.replace(spelling, "平")
    t = re.sub(r"[—–－~～〜]", "-", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = _PAIR_RE.sub(_expand_pair, t)
    t = _SCALED_RANGE_RE.sub(_scale_range, t)
    t = _CN_NUM_RE.sub(_to_digits, t)
    # 1千万 / 2百万 after digit conversion: "1千" is not caught above when all digits
    t = re.sub(r"(\d+(?:\.\d+)?)\s*千\s*万", lambda m: f"{float(m.group(1)) * 1000:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*百\s*万", lambda m: f"{float(m.group(1)) * 100:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*个?\s*亿", lambda m: f"{float(m.group(1)) * 10000:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*[wW](?![a-zA-Z])", r"\1万", t)
    return t


__all__ = ["CN_DIGITS", "CN_UNITS", "NUM", "cn_to_int", "normalise_question"]
