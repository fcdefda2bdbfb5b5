"""Chinese numerals → numbers: whole numbers below 万 (:func:`cn_to_int`) and amounts (:func:`read_number`).

Two readers, because two kinds of numeral are read and they differ on purpose:

* :func:`cn_to_int` — a whole number written with 十/百/千 and digits: 两室, 三千五, 二〇一九, a
  statute's 第一百八十一条. It is read colloquially, as people say it: a digit after 百 or 千 is one
  place lower (三千五 = 3500, 一百一 = 110) unless a 零 keeps it literal (一千零五 = 1005); formal
  numbering (二百二十) reads the same either way. No library: every numeral before a unit of every
  question passes through it (about 1 µs, against cn2an's 80 µs).
* :func:`read_number` — an amount: decimals (三点一, 1.5), the 万/亿 scale (两万五, 1.5亿, 2万5千), w
  and k (2w, 8k), thousands separators (3,000,000). Read by ``cn2an``, with a fallback for the
  spoken forms it refuses (两万五 = 2.5万).

:data:`SCALE` is the one table of 万/亿/千.

Example::

    >>> cn_to_int("三千五"), cn_to_int("一千零五"), cn_to_int("七宝")
    (3500, 1005, None)
    >>> read_number("两万五"), read_number("1.5亿"), read_number("三点一")
    (25000.0, 150000000.0, 3.1)
    >>> article_number("第十二条")
    12
"""

from __future__ import annotations

import re
import warnings

DIGITS: dict[str, int] = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4,
                          "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
PLACES: dict[str, int] = {"十": 10, "百": 100, "千": 1000}
#: the scale words of an amount (两万五, 1.5亿, 3千)
SCALE: dict[str, int] = {"亿": 100_000_000, "万": 10_000, "千": 1_000}
#: the characters of a numeral below 万 (俩 is spoken only: :func:`cn_to_int` reads it too)
NUMERALS = "零〇一二两三四五六七八九十百千"
#: a decimal number as a regex group (the building block of the extractors' patterns)
NUM = r"(\d+(?:\.\d+)?)"


def cn_to_int(s: str) -> int | None:
    """``一千二百`` → 1200, ``两千`` → 2000, ``十五`` → 15, ``3千5`` → 3500 (mixed digits too);
    None when ``s`` holds anything but numerals and digits."""
    total, current, last_unit = 0, None, 1
    zero_gap = False  # "一千零五": a 零 after a unit makes the trailing digit literal (1005)
    for ch in s:
        if ch in "零〇" and current is None:
            zero_gap = True
        elif ch.isdecimal():  # not isdigit: ¹ and ① are digits int() cannot read
            current = (current or 0) * 10 + int(ch)
        elif ch in DIGITS:
            current = DIGITS[ch] if current is None else current * 10 + DIGITS[ch]
        elif ch in PLACES:
            unit = PLACES[ch]
            total += (1 if current is None else current) * unit
            current, last_unit, zero_gap = None, unit, False
        else:
            return None
    if current is not None:
        # "三千五" = 3500: a trailing digit after a unit is one unit lower
        scaled = last_unit >= 100 and current < 10 and not zero_gap
        total += current * (last_unit // 10) if scaled else current
    return total


_ARTICLE = re.compile(r"第\s*([零〇一二两三四五六七八九十百千\d]+)\s*条")


def article_number(label: str) -> int | None:
    """``第十二条`` → 12, ``第181条`` → 181 (a statute's article label); None when it is none."""
    m = _ARTICLE.fullmatch(label.strip())
    return cn_to_int(m.group(1)) if m else None


def read_number(text: str) -> float | None:
    """'300万' → 3e6, '两万五' → 25000, '3.1' → 3.1, '三点一' → 3.1; None when unreadable."""
    token = text.strip().replace(",", "").replace("，", "").replace(" ", "")
    token = token.replace("w", "万").replace("W", "万").replace("k", "千").replace("K", "千")
    if not token:
        return None
    import cn2an  # here: importing it takes ~1.5 s, which reading 三千五 or 第十二条 never needs

    try:
        return float(cn2an.cn2an(token, "smart"))
    except (ValueError, KeyError, TypeError, IndexError):
        pass
    m = re.fullmatch(r"(.+?)(亿|万|千)(.*)", token)
    if m is None:
        return None
    head = read_number(m.group(1))
    if head is None:
        return None
    unit = SCALE[m.group(2)]
    tail = read_number(m.group(3)) if m.group(3) else 0.0
    # "两万五": the digit after the scale word is the next place down (2.5万)
    return head * unit + (tail or 0.0) * unit / 10


def to_arabic(text: str) -> str:
    """Every Chinese numeral of ``text`` in digits (``月供约九千元`` → ``月供约9000元``), by cn2an;
    the text as it is when cn2an cannot read it."""
    import cn2an

    try:
        with warnings.catch_warnings():  # cn2an warns about fragments it leaves as they are
            warnings.simplefilter("ignore")
            return str(cn2an.transform(text, "cn2an"))
    except Exception:  # cn2an raises plain errors on odd input; digits-only reading still works
        return text


__all__ = [
    "DIGITS",
    "NUM",
    "NUMERALS",
    "PLACES",
    "SCALE",
    "article_number",
    "cn_to_int",
    "read_number",
    "to_arabic",
]
