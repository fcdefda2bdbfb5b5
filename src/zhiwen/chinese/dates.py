"""A calendar day as people write it: 2026-01-15, 2026/1/15, 2026.01.15, 20260115, 2026年1月15日.

Example::

    >>> read_day("2026年1月15日"), read_day("20260115"), read_day(" 2026/1/15 ")
    (datetime.date(2026, 1, 15), datetime.date(2026, 1, 15), datetime.date(2026, 1, 15))
"""

from __future__ import annotations

import re
from datetime import date

_DAY = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?")
_COMPACT_DAY = re.compile(r"(\d{4})(\d{2})(\d{2})")


def read_day(text: str) -> date:
    """The day ``text`` names (ISO forms too); :class:`ValueError` when it names none."""
    text = text.strip()
    m = _DAY.fullmatch(text) or _COMPACT_DAY.fullmatch(text)
    if m is None:
        return date.fromisoformat(text)
    return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


__all__ = ["read_day"]
