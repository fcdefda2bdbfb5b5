"""Cities, districts and 板块 a buyer names in a sentence (「想在浦东买房」, 「黄埔和天河」).

One reading per name, for a buyer's facts: a district before a 板块, the city the most names
belong to settles a name several cities share, a 板块 that is also a common word (和平) is never
read, and the cities the gazetteer does not list (北京, 南宁 …) are still cities. The data is
:mod:`zhiwen.chinese.gazetteer`'s, whose :meth:`~zhiwen.chinese.gazetteer.Gazetteer.find_mentions`
gives every reading of every name instead (the listings' filters choose among them).

Example::

    >>> find_cities("想在上海买房")
    ['上海']
    >>> [(m.surface, m.district) for m in find_districts("浦东和闵行哪个房价高")]
    [('浦东', '浦东新区'), ('闵行', '闵行区')]
    >>> canonical_district("上海", "浦东")
    '浦东新区'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from zhiwen.chinese.gazetteer import get_gazetteer

# cities users name that the 2019 listings do not cover (policy and maths still apply)
OTHER_CITIES = (
    "北京", "天津", "重庆", "南京", "苏州", "武汉", "西安", "长沙", "郑州", "青岛", "厦门", "南宁",
    "合肥", "福州", "济南", "东莞", "佛山", "宁波", "无锡", "昆明", "沈阳", "大连", "哈尔滨", "长春",
    "石家庄", "太原", "贵阳", "南昌", "海口", "兰州", "珠海", "温州", "绍兴", "嘉兴", "常州",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlaceMention:
    surface: str  # as written: 浦东
    city: str
    district: str  # canonical: 浦东新区
    bankuai: str | None = None  # set when the mention is a 板块
    start: int = 0


def _short(district: str) -> str:
    """闵行区 → 闵行, 浦东新区 → 浦东新 (a two-character name keeps its suffix)."""
    return district[:-1] if district.endswith(("区", "市")) and len(district) > 2 else district


@lru_cache(maxsize=1)
def _city_names() -> list[tuple[str, str]]:
    names = []
    gaz = get_gazetteer()
    for city in gaz.cities:
        names += [(city, city)] + [(a, city) for a in gaz.city_aliases(city) if len(a) >= 2]
    names += [(c, c) for c in OTHER_CITIES] + [(c + "市", c) for c in OTHER_CITIES]
    return sorted(names, key=lambda p: -len(p[0]))


@lru_cache(maxsize=1)
def _district_names() -> list[tuple[str, str, str, str | None]]:
    """(surface, city, district, bankuai) for every district name, alias and 板块, longest first."""
    gaz = get_gazetteer()
    out: list[tuple[str, str, str, str | None]] = []
    for city in gaz.cities:
        for district in gaz.districts(city):
            for name in {district, _short(district), *gaz.district_aliases(city, district)}:
                if len(name) >= 2:
                    out.append((name, city, district, None))
            for bk in gaz.bankuai(city, district):
                if len(bk) >= 2 and bk not in gaz.weak:
                    out.append((bk, city, district, bk))
    return sorted(out, key=lambda p: -len(p[0]))


def find_cities(text: str) -> list[str]:
    """Cities named in ``text``, in order of appearance, without repeats."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for name, city in _city_names():
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            if not any(s < end and start < e for s, e in taken):
                taken.append((start, end))
                found.append((start, city))
            start = text.find(name, end)
    out: list[str] = []
    for _, city in sorted(found):
        if city not in out:
            out.append(city)
    return out


def find_districts(text: str, *, city: str | None = None) -> list[PlaceMention]:
    """Districts (and 板块) named in ``text``; ``city`` settles names several cities share."""
    candidates = _district_candidates(text)
    kept = _outermost_spans(candidates)
    preferred = city or _most_named_city(candidates, kept)
    out: list[PlaceMention] = []
    seen: set[tuple[str, str]] = set()
    for span in sorted(kept):
        chosen = _reading(candidates[span], preferred, strict=city is not None)
        if chosen is None:
            continue
        key = (chosen.city, chosen.bankuai or chosen.district)
        if key not in seen:
            seen.add(key)
            out.append(chosen)
    return out


def _district_candidates(text: str) -> dict[tuple[int, int], list[PlaceMention]]:
    """Every reading of every place name in ``text``, by span."""
    candidates: dict[tuple[int, int], list[PlaceMention]] = {}
    for name, c, district, bankuai in _district_names():
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            candidates.setdefault((start, end), []).append(PlaceMention(name, c, district, bankuai, start))
            start = text.find(name, end)
    return candidates


def _outermost_spans(candidates: dict[tuple[int, int], list[PlaceMention]]) -> list[tuple[int, int]]:
    # a span inside a longer one is not a mention of its own (浦东新区 beats 浦东)
    kept: list[tuple[int, int]] = []
    for span in sorted(candidates, key=lambda s: (s[0], -(s[1] - s[0]))):
        if not any(k[0] <= span[0] and span[1] <= k[1] for k in kept):
            kept.append(span)
    return kept


def _most_named_city(
    candidates: dict[tuple[int, int], list[PlaceMention]], kept: list[tuple[int, int]]
) -> str | None:
    """The city that the most names belong to without doubt (None when no name is sure)."""
    unambiguous: Counter[str] = Counter()
    for span in kept:
        cities = {m.city for m in candidates[span]}
        if len(cities) == 1:
            unambiguous[cities.pop()] += 1
    return unambiguous.most_common(1)[0][0] if unambiguous else None


def _reading(cands: list[PlaceMention], preferred: str | None, *, strict: bool) -> PlaceMention | None:
    """The reading of one name: in the preferred city when it has one there (only there when
    ``strict``: the caller named the city), a district before a 板块."""
    if preferred is not None:
        in_city = [m for m in cands if m.city == preferred]
        if strict and not in_city:
            return None
        cands = in_city or cands
    return min(cands, key=lambda m: m.bankuai is not None)  # a district reading first


@lru_cache(maxsize=1)
def _canonical_names() -> dict[tuple[str, str], str]:
    """(city, name) → district, for every district's name, short form and alias."""
    gaz = get_gazetteer()
    names: dict[tuple[str, str], str] = {}
    for city in gaz.cities:
        for district in gaz.districts(city):
            for name in (district, _short(district), *gaz.district_aliases(city, district)):
                names.setdefault((city, name), district)  # a name two districts share: the first
    return names


def canonical_district(city: str, name: str) -> str | None:
    """浦东 / 浦东新区 / 南汇 / 闵行 → the district's name within ``city``; None when unknown."""
    return _canonical_names().get((city, name.strip()))


__all__ = ["OTHER_CITIES", "PlaceMention", "canonical_district", "find_cities", "find_districts"]
