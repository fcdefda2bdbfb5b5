"""Constraint questions over the Shanghai listings, each with its constraints written by hand.

The constraints are NOT derived from the extractor: they say what a human reading the question
expects every returned listing to satisfy. Used by the tests and ``bench/bench_listings.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# (question, constraints). Keys: district (str | list), bankuai (list), price_min, price_max,
# rooms (int | (lo, hi)), halls, area_min, area_max, elevator, decoration (allowed list),
# not_decoration, not_floor, floor, facing_south, north_south, build_year_min, not_district,
# not_title (words the agent's title must not use, e.g. 高架), unit_price_min / unit_price_max
# (元/㎡), building_type (allowed list), not_building_type
SH_QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("浦东800万以内的两房", {"district": "浦东新区", "price_max": 800, "rooms": 2}),
    (
        "浦东三林800万以内的两室，不要毛坯，要有电梯",
        {"bankuai": ["三林"], "price_max": 800, "rooms": 2, "not_decoration": ["毛坯"], "elevator": True},
    ),
    ("预算900万左右，徐汇区三房", {"district": "徐汇区", "price_min": 810, "price_max": 990, "rooms": 3}),
    ("闵行七宝2居 不超过600万", {"bankuai": ["七宝"], "price_max": 600, "rooms": 2}),
    ("宝山300万以内，不要一楼", {"district": "宝山区", "price_max": 300, "not_floor": ["低楼层"]}),
    ("静安区有电梯的精装两房", {"district": "静安区", "elevator": True, "decoration": ["精装"], "rooms": 2}),
    (
        "长宁区500到800万，100平以上",
        {"district": "长宁区", "price_min": 500, "price_max": 800, "area_min": 100},
    ),
    ("松江60平以下的一室", {"district": "松江区", "area_max": 60, "rooms": 1}),
    ("嘉定不要毛坯房，三室", {"district": "嘉定区", "not_decoration": ["毛坯"], "rooms": 3}),
    ("杨浦区200万到400万的房子", {"district": "杨浦区", "price_min": 200, "price_max": 400}),
    ("普陀区两室一厅，有电梯", {"district": "普陀区", "rooms": 2, "halls": 1, "elevator": True}),
    ("虹口区不要低楼层的两房", {"district": "虹口区", "not_floor": ["低楼层"], "rooms": 2}),
    ("黄浦区1000万以内", {"district": "黄浦区", "price_max": 1000}),
    ("青浦或者松江，三房，400万以内", {"district": ["青浦区", "松江区"], "rooms": 3, "price_max": 400}),
    ("要么在静安区要么在徐汇区，600万以内", {"district": ["静安区", "徐汇区"], "price_max": 600}),
    ("浦东新区100㎡以上的三室两厅", {"district": "浦东新区", "area_min": 100, "rooms": 3, "halls": 2}),
    (
        "闵行区精装修，500万以内，朝南",
        {"district": "闵行区", "decoration": ["精装"], "price_max": 500, "facing_south": True},
    ),
    ("奉贤200万以下的两房", {"district": "奉贤区", "price_max": 200, "rooms": 2}),
    (
        "浦东不要没电梯的，三房，1000万以内",
        {"district": "浦东新区", "elevator": True, "rooms": 3, "price_max": 1000},
    ),
    ("徐汇80到100平米的两房", {"district": "徐汇区", "area_min": 80, "area_max": 100, "rooms": 2}),
    ("宝山区 2010年以后建的房子", {"district": "宝山区", "build_year_min": 2010}),
    ("莘庄附近三房，500万以上", {"bankuai": ["莘庄"], "rooms": 3, "price_min": 500}),
    ("五角场附近不要毛坯，两房", {"bankuai": ["五角场"], "not_decoration": ["毛坯"], "rooms": 2}),
    ("张江有电梯的房子，700万以内", {"bankuai": ["张江"], "elevator": True, "price_max": 700}),
    ("嘉定新城的两房，300万左右", {"bankuai": ["嘉定新城"], "rooms": 2, "price_min": 270, "price_max": 330}),
    (
        "不要浦东的，徐汇或者长宁，两房",
        {"district": ["徐汇区", "长宁区"], "not_district": ["浦东新区"], "rooms": 2},
    ),
    ("上海静安500万以内，不要高楼层", {"district": "静安区", "price_max": 500, "not_floor": ["高楼层"]}),
    (
        "闵行两到三房，不要毛坯，不要低楼层",
        {"district": "闵行区", "rooms": (2, 3), "not_decoration": ["毛坯"], "not_floor": ["低楼层"]},
    ),
    (
        "浦东简装的两室，400万以下",
        {"district": "浦东新区", "decoration": ["简装"], "rooms": 2, "price_max": 400},
    ),
    ("普陀区120平米左右的三房", {"district": "普陀区", "area_min": 108, "area_max": 132, "rooms": 3}),
    ("杨浦区南北通透的两房", {"district": "杨浦区", "north_south": True, "rooms": 2}),
    (
        "宝山区有电梯，精装，300到500万",
        {"district": "宝山区", "elevator": True, "decoration": ["精装"], "price_min": 300, "price_max": 500},
    ),
    ("虹口区三房以上，800万以内", {"district": "虹口区", "rooms": (3, None), "price_max": 800}),
    (
        "宝山区三房，不要顶楼，300到450万",
        {"district": "宝山区", "rooms": 3, "not_floor": ["高楼层"], "price_min": 300, "price_max": 450},
    ),
    (
        "浦东两房，远离高架，不要临街，500万以内",
        {"district": "浦东新区", "rooms": 2, "price_max": 500, "not_title": ["高架", "临街"]},
    ),
    ("长宁区中间楼层的两房", {"district": "长宁区", "floor": ["中楼层"], "rooms": 2}),
]


# The phrasings users reported as misread (seed 000 defects): colloquial prices (两三百万, 三百来万,
# 五六百万 …), building type (板楼 / 塔楼), unit price (单价6万以下, 均价8万以内 …) and floors.
# For "不要一楼" / "不要顶楼" a reader expects a listing that is surely not on that floor, i.e.
# another band: the service ranks such listings first (the data cannot check exact floors).
SH_DEFECT_QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("徐汇两三百万的一室户", {"district": "徐汇区", "price_min": 200, "price_max": 300, "rooms": 1}),
    (
        "预算三百来万，想在闵行买个两房",
        {"district": "闵行区", "price_min": 270, "price_max": 330, "rooms": 2},
    ),
    ("宝山四百万左右的三房", {"district": "宝山区", "price_min": 360, "price_max": 440, "rooms": 3}),
    (
        "浦东五六百万的两室一厅",
        {"district": "浦东新区", "price_min": 500, "price_max": 600, "rooms": 2, "halls": 1},
    ),
    ("静安一两千万的大三房", {"district": "静安区", "price_min": 1000, "price_max": 2000, "rooms": 3}),
    ("杨浦300万上下的两房", {"district": "杨浦区", "price_min": 270, "price_max": 330, "rooms": 2}),
    ("普陀300来万的两房", {"district": "普陀区", "price_min": 270, "price_max": 330, "rooms": 2}),
    ("长宁两到三百万的一居室", {"district": "长宁区", "price_min": 200, "price_max": 300, "rooms": 1}),
    ("松江两三百万，想要两房", {"district": "松江区", "price_min": 200, "price_max": 300, "rooms": 2}),
    ("嘉定200-300万的两房", {"district": "嘉定区", "price_min": 200, "price_max": 300, "rooms": 2}),
    ("浦东500万以内，两三房都可以", {"district": "浦东新区", "price_max": 500, "rooms": (2, 3)}),
    (
        "浦东塔楼两房，600万以内",
        {"district": "浦东新区", "building_type": ["塔楼"], "rooms": 2, "price_max": 600},
    ),
    (
        "徐汇板楼，南北通透的两房",
        {"district": "徐汇区", "building_type": ["板楼"], "north_south": True, "rooms": 2},
    ),
    ("静安三房，不要塔楼", {"district": "静安区", "not_building_type": ["塔楼"], "rooms": 3}),
    (
        "杨浦的板楼，400万以内，有电梯",
        {"district": "杨浦区", "building_type": ["板楼"], "price_max": 400, "elevator": True},
    ),
    ("上海板塔结合的房子", {"building_type": ["板塔结合"]}),
    ("浦东两房，单价6万以下", {"district": "浦东新区", "rooms": 2, "unit_price_max": 60000}),
    ("徐汇单价不超过8万的两房", {"district": "徐汇区", "unit_price_max": 80000, "rooms": 2}),
    ("均价8万以内的静安房子", {"district": "静安区", "unit_price_max": 80000}),
    (
        "闵行三房，单价5到6万",
        {"district": "闵行区", "rooms": 3, "unit_price_min": 50000, "unit_price_max": 60000},
    ),
    ("宝山单价4万以下，总价300万以内", {"district": "宝山区", "unit_price_max": 40000, "price_max": 300}),
    ("长宁每平米7万以内的一室", {"district": "长宁区", "unit_price_max": 70000, "rooms": 1}),
    (
        "普陀单价5万左右的两房",
        {"district": "普陀区", "unit_price_min": 45000, "unit_price_max": 55000, "rooms": 2},
    ),
    ("家里有老人，不要顶楼，杨浦两房", {"district": "杨浦区", "rooms": 2, "not_floor": ["高楼层"]}),
    ("虹口两房，不要一楼也不要顶楼", {"district": "虹口区", "rooms": 2, "not_floor": ["低楼层", "高楼层"]}),
    ("浦东高楼层的两房，但不要顶楼", {"district": "浦东新区", "rooms": 2, "floor": ["高楼层"]}),
    ("闵行三房，楼层不要太低", {"district": "闵行区", "rooms": 3, "not_floor": ["低楼层"]}),
    ("普陀两房，不要低楼层，不要顶楼", {"district": "普陀区", "rooms": 2, "not_floor": ["低楼层", "高楼层"]}),
    (
        "松江400万以内的三房，不要底楼，板楼",
        {
            "district": "松江区",
            "rooms": 3,
            "price_max": 400,
            "building_type": ["板楼"],
            "not_floor": ["低楼层"],
        },
    ),
    (
        "徐汇不要一楼，单价7万以内，两房",
        {"district": "徐汇区", "rooms": 2, "unit_price_max": 70000, "not_floor": ["低楼层"]},
    ),
]


def check(meta: Mapping[str, Any], c: Mapping[str, Any]) -> list[str]:
    """The constraints of ``c`` that listing ``meta`` breaks (empty = satisfies all)."""
    bad: list[str] = []
    for key, broken in _RULES:
        if key in c:
            bad += broken(meta, c[key])
    return bad


def _num(meta: Mapping[str, Any], key: str) -> float | None:
    v = meta.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


Rule = Callable[[Mapping[str, Any], Any], list[str]]


def _flag(name: str, breaks: Callable[[Mapping[str, Any], Any], bool]) -> Rule:
    return lambda meta, want: [name] if breaks(meta, want) else []


def _in(name: str, field: str) -> Rule:
    """The listing's ``field`` must be one of the wanted values."""
    return _flag(name, lambda meta, want: meta.get(field) not in want)


def _not_in(name: str, field: str) -> Rule:
    """The listing's ``field`` must be none of the unwanted values."""
    return _flag(name, lambda meta, want: meta.get(field) in want)


def _at_least(name: str, field: str) -> Rule:
    return _flag(name, lambda meta, want: (v := _num(meta, field)) is None or v < want)


def _at_most(name: str, field: str) -> Rule:
    return _flag(name, lambda meta, want: (v := _num(meta, field)) is None or v > want)


def _district(meta: Mapping[str, Any], want: Any) -> bool:
    allowed = [want] if isinstance(want, str) else want
    return meta.get("district") not in allowed


def _rooms(meta: Mapping[str, Any], want: Any) -> bool:
    rooms = meta.get("rooms")
    lo, hi = (want, want) if isinstance(want, int) else want
    return not isinstance(rooms, int) or rooms < lo or (hi is not None and rooms > hi)


def _facing(meta: Mapping[str, Any]) -> list[str]:
    return str(meta.get("orientation") or "").split()


def _title_words(meta: Mapping[str, Any], words: Any) -> list[str]:
    title = str(meta.get("title") or "")
    return [
        f"not_title:{word}"
        for word in words
        if word in title and f"不{word}" not in title and f"远离{word}" not in title
    ]


def _build_year(meta: Mapping[str, Any], want: Any) -> bool:
    by = meta.get("build_year")
    return not isinstance(by, int) or by < want


# each constraint a listing may break, in the order they are reported
_RULES: list[tuple[str, Rule]] = [
    ("district", _flag("district", _district)),
    ("not_district", _not_in("not_district", "district")),
    ("bankuai", _in("bankuai", "bankuai")),
    ("price_min", _at_least("price_min", "price")),
    ("price_max", _at_most("price_max", "price")),
    ("area_min", _at_least("area_min", "area")),
    ("area_max", _at_most("area_max", "area")),
    ("rooms", _flag("rooms", _rooms)),
    ("halls", _flag("halls", lambda meta, want: meta.get("halls") != want)),
    ("elevator", _flag("elevator", lambda meta, want: meta.get("elevator") is not want)),
    ("decoration", _in("decoration", "decoration")),
    ("not_decoration", _not_in("not_decoration", "decoration")),
    ("floor", _in("floor", "floor_level")),
    ("not_floor", _not_in("not_floor", "floor_level")),
    ("facing_south", _flag("facing_south", lambda meta, want: bool(want) and "南" not in _facing(meta))),
    (
        "north_south",
        _flag("north_south", lambda meta, want: bool(want) and not {"南", "北"} <= set(_facing(meta))),
    ),
    ("unit_price_min", _at_least("unit_price_min", "unit_price")),
    ("unit_price_max", _at_most("unit_price_max", "unit_price")),
    ("building_type", _in("building_type", "building_type")),
    ("not_building_type", _not_in("not_building_type", "building_type")),
    ("not_title", _title_words),
    ("build_year_min", _flag("build_year_min", _build_year)),
]
