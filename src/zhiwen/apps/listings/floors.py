"""Floors: what the buyer asked for, and what the data can tell about it.

The data knows a floor only as a band — 低楼层 / 中楼层 / 高楼层 — plus the building's total
floors ("中楼层(共6层)"). So:

* band words are hard constraints: "中高楼层", "不要低楼层", "楼层不要太高" → ``floor_in`` /
  ``floor_exclude`` (store filters);
* an exact floor the buyer wants ("要一楼", "二楼") is read as its band (低楼层), a superset;
* an exact floor the buyer avoids ("不要一楼", "不要顶楼") cannot be excluded exactly, and
  excluding the whole band would drop many good listings (a 高楼层 of 共30层 is floor 21–30).
  It stays a *soft* negation (see :mod:`~zhiwen.apps.listings.specials`), and
  :func:`check_floor` says per listing whether it is certainly clear (another band), possibly on
  that floor (in the band: the chance is one over the band's height), or certainly on it
  (共1层; a band one floor high, i.e. a building of ≤ 3 floors; the title says 顶楼).

Example::

    >>> check_floor("顶楼", {"floor_level": "高楼层", "total_floors": 6}).reason
    '数据仅有楼层区间（高楼层，共6层），无法确认是否顶楼'
    >>> check_floor("顶楼", {"floor_level": "中楼层", "total_floors": 18}).status
    'clear'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.requirements import Requirements, add_unique
from zhiwen.apps.listings.vocabulary import AVOIDABLE_FLOORS, NEGATIONS

BANDS = ("低楼层", "中楼层", "高楼层")
_BAND_WORDS: dict[str, str] = {
    "低楼层": "低楼层", "中楼层": "中楼层", "中间楼层": "中楼层", "中层": "中楼层",
    "高楼层": "高楼层", "高层": "高楼层",
}  # fmt: skip
# exact low floors: wanted → their band (a superset); avoided → the soft negation 一楼
_LOW_EXACT = re.compile(r"(?<![\d-])(?:1\s*[楼层]|2\s*楼|1\s*-\s*2\s*楼)|底楼|底层|首层|一楼|二楼")
_BAND_RE = re.compile("|".join(sorted(_BAND_WORDS, key=len, reverse=True)))
_TWO_BANDS = {"低楼层": r"中低楼层|中低层|中低区", "高楼层": r"中高楼层|中高层|中高区"}
_NOT_TOO = {
    "低楼层": r"楼层(?:不要|别|不能|不想)太?(?:低|矮)|(?:不要|别)太?低(?:的)?楼层",
    "高楼层": r"楼层(?:不要|别|不能|不想)太?高|(?:不要|别)太?高(?:的)?楼层",
}


def extract_floors(t: str, req: Requirements) -> None:
    """Fill the hard band constraints ``floor_in`` / ``floor_exclude`` (exact floors: see module doc)."""
    for band, pattern in _TWO_BANDS.items():  # "中高楼层" = 中 + 高
        if re.search(pattern, t):
            req.floor_in = ["中楼层", band] if band == "高楼层" else [band, "中楼层"]
            t = re.sub(pattern, " ", t)
    for band, pattern in _NOT_TOO.items():
        if re.search(pattern, t):
            add_unique(req.floor_exclude, band)
    for m in _BAND_RE.finditer(t):
        if m.group(0) == "高层" and (
            re.match(r"高层(住宅|建筑|小区)", t[m.start() :]) or t[max(0, m.start() - 1) : m.start()] == "最"
        ):
            continue  # a high-rise building, or 最高层 (= 顶楼, an exact floor)
        band = _BAND_WORDS[m.group(0)]
        add_unique(req.floor_exclude if is_negated(t, m.start(), end=m.end()) else req.floor_in, band)
    for m in _LOW_EXACT.finditer(t):
        if not is_negated(t, m.start(), end=m.end()):
            add_unique(req.floor_in, "低楼层")
    req.floor_in = [f for f in req.floor_in if f not in req.floor_exclude]


# -- what one listing's data says about an avoided exact floor ---------------------------------
Status = Literal["clear", "possible", "certain", "unknown"]


@dataclass(frozen=True, slots=True)
class FloorCheck:
    """Whether a listing is on a floor the buyer avoids, as far as the data can tell."""

    avoid: str  # 一楼 | 顶楼
    status: Status
    likelihood: float  # 0..1: the chance it is on that floor (1 = certain, 0 = clear)
    reason: str  # Chinese, for match_reasons

    @property
    def risky(self) -> bool:
        return self.status != "clear"


def _where(level: str | None, total: int | None) -> str:
    return "，".join(x for x in (level, f"共{total}层" if total else None) if x)


def _title_says(avoid: str, title: str) -> bool:
    for m in re.finditer(NEGATIONS[avoid][1], title):
        if not re.search(r"(不|非|无|没有?)$", title[max(0, m.start() - 2) : m.start()]):
            return True
    return False


def _banded(avoid: str, level: str, total: int | None) -> FloorCheck:
    where = _where(level, total)
    if level != AVOIDABLE_FLOORS[avoid]:
        return FloorCheck(avoid, "clear", 0.0, f"楼层符合: {where}，不是{avoid}")
    height = math.ceil(total / 3) if total else None  # floors in one band
    if height == 1:
        return FloorCheck(avoid, "certain", 1.0, f"注意: {where}，即{avoid}")
    likelihood = 1.0 / height if height else 0.5
    return FloorCheck(avoid, "possible", likelihood, f"数据仅有楼层区间（{where}），无法确认是否{avoid}")


def check_floor(avoid: str, meta: Mapping[str, Any]) -> FloorCheck:
    """What the data says about listing ``meta`` and the avoided floor ``avoid`` (一楼 / 顶楼)."""
    level = meta.get("floor_level")
    total = meta.get("total_floors") if isinstance(meta.get("total_floors"), int) else None
    if _title_says(avoid, str(meta.get("title") or "")):
        return FloorCheck(avoid, "certain", 1.0, f"注意: 房源标题提到{avoid}")
    if total == 1:
        return FloorCheck(avoid, "certain", 1.0, f"注意: 共1层，必然是{avoid}")
    if level in BANDS:
        return _banded(avoid, level, total)
    stacked = {"上叠": "顶楼", "下叠": "一楼"}
    if level in stacked:  # a stacked villa's upper / lower part holds the top / ground floor
        if stacked[level] == avoid:
            return FloorCheck(
                avoid, "possible", 0.5, f"数据仅有楼层区间（叠拼别墅{level}），无法确认是否{avoid}"
            )
        return FloorCheck(avoid, "clear", 0.0, f"楼层符合: 叠拼别墅{level}，不是{avoid}")
    where = _where(None, total)
    detail = f"（{where}）" if where else ""
    return FloorCheck(avoid, "unknown", 0.5, f"数据没有楼层区间{detail}，无法确认是否{avoid}")


__all__ = ["BANDS", "FloorCheck", "check_floor", "extract_floors"]
