"""Yes/no and categorical wishes: elevator, decoration, orientation, building age and type.

* elevator — "要有电梯" → True; "不要没电梯的" / "不要步梯房" → True (double negation);
  "无电梯也行" → no constraint; "不要电梯" → False.
* decoration — 精装 / 简装 / 毛坯 wanted (``decoration_in``) or excluded; "带装修" = not 毛坯.
* orientation — 南北通透, 朝南, and 不要朝北 (``exclude_north``).
* build year — "2010年以后", "房龄10年以内" (from :data:`REFERENCE_YEAR`, the crawl's year),
  "次新房", "不要老房子".
* building type — 板楼 / 塔楼 / 板塔结合 as the data's ``building_type`` spells them:
  wanted (``building_type``) or excluded (``building_type_exclude``).

Example::

    >>> req = Requirements()
    >>> extract_flags("要板楼，不要毛坯，要有电梯，房龄10年以内", req)
    >>> req.building_type, req.decoration_exclude, req.elevator, req.build_year_min
    (['板楼'], ['毛坯'], True, 2009)
"""

from __future__ import annotations

import re

from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.requirements import Requirements, add_unique
from zhiwen.apps.listings.vocabulary import BUILDING_TYPES, REFERENCE_YEAR

_ELEVATOR_RULES: tuple[tuple[str, bool | None], ...] = (
    # double negations first: "不要没电梯的" wants one
    (
        r"(不要|不想要|不考虑|别|拒绝)\s*(没有?|无|不带)\s*电梯|(不要|不考虑|不想要|拒绝|别)\s*(步梯|楼梯房|爬楼)",
        True,
    ),
    (r"(没有?|无|不带|不需要|不要|不用)\s*电梯(也|都)?(行|可以|没关系|无所谓)", None),
)
_NO_ELEVATOR = r"不要\s*电梯|不需要\s*电梯|步梯房|无电梯|没电梯|不带电梯"
_DECORATION_RE = re.compile(
    r"精装修?|豪装|豪华装修|装修好|好装修|简装修?|毛坯房?|清水房?|有装修|带装修|已装修|装修过"
)


def extract_elevator(t: str, req: Requirements) -> None:
    for pattern, value in _ELEVATOR_RULES:
        if re.search(pattern, t):
            req.elevator = value
            return
    if re.search(_NO_ELEVATOR, t):
        req.elevator = bool(re.search(r"(不要|拒绝|别)\s*(无|没)", t))
    elif "电梯" in t:
        req.elevator = True


def _decoration_canon(word: str) -> str:
    if word.startswith(("精装", "豪装", "豪华", "装修好", "好装修")):
        return "精装"
    if word.startswith("简装"):
        return "简装"
    if word.startswith(("毛坯", "清水")):
        return "毛坯"
    return "有装修"


def extract_decoration(t: str, req: Requirements) -> None:
    for m in _DECORATION_RE.finditer(t):
        canon = _decoration_canon(m.group(0))
        neg = is_negated(t, m.start(), end=m.end())
        if canon == "有装修":  # "带装修" = not 毛坯; "不要带装修的" = 毛坯
            add_unique(req.decoration_in if neg else req.decoration_exclude, "毛坯")
        else:
            add_unique(req.decoration_exclude if neg else req.decoration_in, canon)
    req.decoration_in = [d for d in req.decoration_in if d not in req.decoration_exclude]


def extract_orientation(t: str, req: Requirements) -> None:
    ns = re.search(r"南北通透|南北通|南北向|南北朝向", t)
    if ns and not is_negated(t, ns.start()):
        req.north_south = True
    if any(not is_negated(t, m.start()) for m in re.finditer(r"朝南|南向|向南|坐北朝南|双南|全南", t)):
        req.facing_south = True
    for m in re.finditer(r"朝北|北向|向北|全北", t):
        if is_negated(t, m.start()) or t[max(0, m.start() - 2) : m.start()] == "朝南":
            req.exclude_north = True


def _plausible_year(y: int) -> bool:
    return 1950 < y <= REFERENCE_YEAR + 1


def extract_build_year(t: str, req: Requirements) -> None:
    ym = re.search(r"(\d{4})\s*年\s*(?:以后|之后|后|以来|以上)", t)
    if ym and _plausible_year(int(ym.group(1))):
        req.build_year_min = int(ym.group(1))
    ym = re.search(r"(\d{4})\s*年\s*(?:以前|之前|前)", t)
    if ym and _plausible_year(int(ym.group(1))):
        req.build_year_max = int(ym.group(1))
    # "房龄10年以内", "房龄2-3年" (the upper end counts)
    ym = re.search(
        r"(?:房龄|楼龄)\s*(?:不超过|在|小于|低于)?\s*(?:\d+\s*-\s*)?(\d+)\s*年\s*(?:以内|以下|之内|内)?", t
    ) or re.search(r"(\d+)\s*年\s*(?:以内|之内|内)的?(?:房子|房龄|新房|次新)", t)
    if ym and 0 < int(ym.group(1)) < 80:
        req.build_year_min = REFERENCE_YEAR - int(ym.group(1))
    if re.search(r"次新房?|新小区|新一点|房龄新|新房子|较新", t) and req.build_year_min is None:
        req.build_year_min = 2010 if "次新" in t else 2005
    for m in re.finditer(r"老房子?|老破小|老小区|老旧|房龄(太)?(老|大)|旧房", t):
        if is_negated(t, m.start()) and req.build_year_min is None:
            req.build_year_min = 2000


def extract_building_type(t: str, req: Requirements) -> None:
    """板楼 / 塔楼 / 板塔结合: wanted → ``building_type`` (+ a search keyword), negated → excluded."""
    found: list[tuple[int, int, str]] = []
    rest = t
    for canon, pattern in BUILDING_TYPES.items():  # 板塔结合 first, then blanked out
        found.extend((m.start(), m.end(), canon) for m in re.finditer(pattern, rest))
        rest = re.sub(pattern, lambda m: " " * len(m.group(0)), rest)
    for start, end, canon in sorted(found):  # in the question's order
        if is_negated(t, start, end=end):
            add_unique(req.building_type_exclude, canon)
        else:
            add_unique(req.building_type, canon)
            add_unique(req.keywords, canon)
    req.building_type = [b for b in req.building_type if b not in req.building_type_exclude]


def extract_flags(t: str, req: Requirements) -> None:
    """Elevator, decoration, orientation, build year and building type."""
    extract_elevator(t, req)
    extract_decoration(t, req)
    extract_orientation(t, req)
    extract_build_year(t, req)
    extract_building_type(t, req)


__all__ = [
    "extract_build_year",
    "extract_building_type",
    "extract_decoration",
    "extract_elevator",
    "extract_flags",
    "extract_orientation",
]
