"""The home itself: area (㎡), rooms and halls (``2室1厅``), property type (别墅, 公寓 …).

Area: ranges ("80到100平"), bounds ("不小于90平", "60平以下"), approximations ("120平左右" =
±10 %, "90平多" = 90–108). Rooms: ranges ("2-3房", "两三房"), bounds ("至少三个房间", "三房及
以上"), exact ("三室两厅"). Property type: the first type named and not negated; a negated
villa type ("不要别墅") becomes the soft negation 别墅.

Example::

    >>> req = Requirements()
    >>> t = "120平左右的3室2厅洋房"
    >>> extract_area(t, req); extract_rooms(t, req); extract_property_type(t, req)
    >>> req.area_min, req.area_max, req.rooms_min, req.halls, req.property_type
    (108.0, 132.0, 3, 2, '洋房')
"""

from __future__ import annotations

import re

from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.requirements import Requirements, add_unique
from zhiwen.apps.listings.vocabulary import PROPERTY_TYPES, VILLA_TYPES
from zhiwen.chinese.numerals import NUM

# -- area ----------------------------------------------------------------------------------------
_AREA_UNIT = r"(?:平|方|坪)(?![层房台])"
_AREA_RANGE = re.compile(rf"{NUM}\s*(?:{_AREA_UNIT})?\s*(?:-|到|至)\s*{NUM}\s*{_AREA_UNIT}")
_AREA_MIN = re.compile(
    rf"(?<!不)(?:不小于|不低于|至少|最少|起码|大于|超过|不少于)\s*(?:面积)?\s*{NUM}\s*{_AREA_UNIT}"
)
_AREA_MAX = re.compile(rf"(?:不超过|不大于|最多|小于|不到|低于|以内)\s*(?:面积)?\s*{NUM}\s*{_AREA_UNIT}")
_AREA_ONE = re.compile(
    rf"(?:面积)?\s*{NUM}\s*来?\s*{_AREA_UNIT}\s*(?:米)?\s*(以上|以下|以内|之内|左右|上下|起|往上|多|出头|内)?"
)


def _one_area(v: float, q: str | None, req: Requirements) -> None:
    if q in ("以上", "起", "往上"):
        req.area_min = v
    elif q in ("以下", "以内", "之内", "内"):
        req.area_max = v
    elif q in ("多", "出头"):
        req.area_min, req.area_max = v, round(v * 1.2, 1)
    else:  # "120平", "120平左右", "100来平": about that size
        req.area_min, req.area_max = round(v * 0.9, 1), round(v * 1.1, 1)


def extract_area(t: str, req: Requirements) -> None:
    """Fill ``area_min`` / ``area_max`` (㎡); a vague wish (宽敞, 小户型) goes to ``vague``."""
    spans: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        a, b = m.span()
        return not any(a < y and x < b for x, y in spans)

    for m in _AREA_RANGE.finditer(t):
        req.area_min, req.area_max = sorted((float(m.group(1)), float(m.group(2))))
        spans.append(m.span())
    for pattern, attr in ((_AREA_MIN, "area_min"), (_AREA_MAX, "area_max")):
        for m in pattern.finditer(t):
            if free(m):
                setattr(req, attr, float(m.group(1)))
                spans.append(m.span())
    for m in _AREA_ONE.finditer(t):
        v = float(m.group(1))
        if free(m) and 8 <= v <= 2000:
            _one_area(v, m.group(2), req)
            spans.append(m.span())
    if re.search(r"面积(?:要)?大|大面积|宽敞|大户型|大房子|空间大", t) and not req.has_area:
        add_unique(req.vague, "面积大一些")
    if re.search(r"小户型|小面积|面积小", t) and not req.has_area:
        add_unique(req.vague, "面积小一些")


# -- rooms ---------------------------------------------------------------------------------------
_ROOM_UNIT = r"(?:个?(?:室|房间|房(?![子源产价东龄型贷])|居室|居|卧室|卧))"
_ROOMS_RANGE = re.compile(rf"(\d+)\s*{_ROOM_UNIT}?\s*(?:-|到|至|或|或者|、)\s*(\d+)\s*{_ROOM_UNIT}")
_ROOMS_MIN = (
    re.compile(rf"(?:至少|起码|最少)\s*(?:要)?\s*(\d+)\s*{_ROOM_UNIT}"),
    re.compile(rf"(\d+)\s*{_ROOM_UNIT}\s*(?:室)?\s*(?:及以上|以上|或以上|起|往上|或更多)"),
)
_ROOMS_MAX = re.compile(rf"(\d+)\s*{_ROOM_UNIT}\s*(?:室)?\s*(?:及以下|以下|以内)")
_ROOMS_EXACT = re.compile(rf"(\d+)\s*{_ROOM_UNIT}(?:\s*(\d+)\s*厅)?")


def _first(patterns: tuple[re.Pattern[str], ...], t: str) -> re.Match[str] | None:
    return next((m for p in patterns if (m := p.search(t))), None)


def extract_rooms(t: str, req: Requirements) -> None:
    """Fill ``rooms_min`` / ``rooms_max`` (and ``halls`` for an exact ``3室2厅``)."""
    m = _ROOMS_RANGE.search(t)
    if m and int(m.group(1)) <= 10 and int(m.group(2)) <= 10:
        req.rooms_min, req.rooms_max = sorted((int(m.group(1)), int(m.group(2))))
        return
    m = _first(_ROOMS_MIN, t)
    if m and int(m.group(1)) <= 10:
        req.rooms_min = int(m.group(1))
        return
    m = _ROOMS_MAX.search(t)
    if m and int(m.group(1)) <= 10:
        req.rooms_max = int(m.group(1))
        return
    m = _ROOMS_EXACT.search(t)
    if m and 0 < int(m.group(1)) <= 10:
        if not is_negated(t, m.start()):
            req.rooms_min = req.rooms_max = int(m.group(1))
            req.halls = int(m.group(2)) if m.group(2) else None
        return
    if re.search(r"单身公寓|开间|一居", t):
        req.rooms_min = req.rooms_max = 1


# -- property type -------------------------------------------------------------------------------
def extract_property_type(t: str, req: Requirements) -> None:
    """The first property type named; negated ones become soft negations (villas: 别墅)."""
    for canon, pat in PROPERTY_TYPES.items():
        pm = re.search(pat, t)
        if not pm:
            continue
        if is_negated(t, pm.start()):
            add_unique(req.negations, "别墅" if canon in VILLA_TYPES else canon)
        elif req.property_type is None:
            req.property_type = canon


__all__ = ["extract_area", "extract_property_type", "extract_rooms"]
