"""One Chinese line saying what was understood from a question (for prompts and answers).

The line goes into the answer prompt and the composed (no-LLM) answer, so it must not claim
more than the data can check: avoided exact floors (一楼 / 顶楼) carry a note that the listings
only have 低/中/高楼层 bands.

Example::

    >>> from zhiwen.apps.listings.extract import extract_rules
    >>> describe_requirements(extract_rules("徐汇两房，单价8万以下，板楼")).split("；")
    ['上海', '位置: 徐汇区', '单价8万元/㎡以下', '户型: 2室', '楼型: 板楼']
    >>> describe_requirements(extract_rules("不要顶楼"))
    '避开: 顶楼（房源数据只有低/中/高楼层区间，顶楼无法精确确认）'
"""

from __future__ import annotations

from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.vocabulary import AVOIDABLE_FLOORS


def _join(prefix: str, values: list[str], sep: str = "/") -> list[str]:
    return [prefix + sep.join(values)] if values else []


def _where_and_what(req: Requirements) -> list[str]:
    parts = _join("", req.cities, "、") + (["位置: " + req.location_text()] if req.places else [])
    parts += _join("排除: ", [p.name for p in req.exclude_places], "、")
    if req.has_price:
        parts.append("预算: " + req.price_text())
    if req.has_unit_price:
        parts.append(req.unit_price_text())
    if req.has_rooms:
        parts.append("户型: " + req.rooms_text() + (f"{req.halls}厅" if req.halls is not None else ""))
    if req.has_area:
        parts.append("面积: " + req.area_text())
    if req.property_type:
        parts.append("类型: " + req.property_type)
    return parts


def _building(req: Requirements) -> list[str]:
    parts = [] if req.elevator is None else ["有电梯" if req.elevator else "无电梯"]
    parts += _join("装修: ", req.decoration_in) + _join("不要", req.decoration_exclude)
    parts += _join("楼层: ", req.floor_in) + _join("不要", req.floor_exclude)
    parts += _join("楼型: ", req.building_type) + _join("不要", req.building_type_exclude)
    if req.build_year_min:
        parts.append(f"{req.build_year_min}年及以后建成")
    if req.north_south:
        parts.append("南北通透")
    elif req.facing_south:
        parts.append("朝南")
    return parts


def _wishes(req: Requirements) -> list[str]:
    parts = _join("特殊需求: ", [s for s in req.special if s not in ("朝南", "南北通透")], "、")
    if req.negations:
        floors = [n for n in req.negations if n in AVOIDABLE_FLOORS]
        # the data has only 低/中/高楼层 bands: say so, so that no answer claims more
        note = f"（房源数据只有低/中/高楼层区间，{'、'.join(floors)}无法精确确认）" if floors else ""
        parts.append("避开: " + "、".join(req.negations) + note)
    return parts


def describe_requirements(req: Requirements) -> str:
    """One Chinese line summarising what was understood (for prompts and composed answers)."""
    return "；".join(_where_and_what(req) + _building(req) + _wishes(req)) or "未提取到明确条件"


__all__ = ["describe_requirements"]
