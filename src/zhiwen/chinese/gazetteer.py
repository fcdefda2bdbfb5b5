"""The packaged gazetteer: cities, districts and 板块 of the five listed cities, read once.

``zhiwen/data/geo/gazetteer.json`` maps every 板块 of the Lianjia crawl to its district (2019
boundaries), and lists city aliases (沪, 魔都), district aliases (浦东 = 浦东新区, 闸北 → 静安区),
板块 aliases, 板块 groups (珠江新城 → 珠江新城东/中/西) and the 板块 names that are also common words
(``weak``: 和平, 中原). :class:`Gazetteer` is its one reader: lookups (a 板块's district, a
district's canonical name), near-misses of a 板块 (莘庄镇, 陆家咀: suffix stripping and rapidfuzz),
and every place named in a text (:meth:`Gazetteer.find_mentions`). :mod:`zhiwen.chinese.places`
reads a buyer's sentence with the same data.

Example::

    >>> gaz = get_gazetteer()
    >>> gaz.district_of("上海", "莘庄")
    '闵行区'
    >>> gaz.normalise_district("浦东")
    '浦东新区'
    >>> [m.name for m in gaz.find_mentions("想在浦东三林或者徐家汇买房")]
    ['浦东新区', '三林', '徐家汇']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from rapidfuzz import fuzz, process

Kind = Literal["city", "district", "bankuai"]
GAZETTEER_FILE = "data/geo/gazetteer.json"  # inside the zhiwen package

# suffixes users add to a 板块 that the data never has
_SUFFIXES = ("板块", "片区", "地区", "街道", "附近", "周边", "一带", "镇", "区")
_FUZZY_CUTOFF_LONG = 66.0  # >= 3 chars: one wrong character (陆家咀 → 陆家嘴) still matches


def _cutoff(name: str) -> float:
    return _FUZZY_CUTOFF_LONG if len(name) >= 3 else 101.0


@dataclass(frozen=True, slots=True)
class Place:
    """One reading of a name: a city, a district of a city, or one or more 板块 of a city."""

    kind: Kind
    city: str
    district: str | None = None
    bankuai: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        if self.kind == "city":
            return self.city
        if self.kind == "district":
            return self.district or ""
        return "/".join(self.bankuai)


@dataclass(frozen=True, slots=True)
class Mention:
    """A place name found in a text: its span and every place it can mean."""

    surface: str
    start: int
    end: int
    places: tuple[Place, ...]
    weak: bool = False  # a common word (和平, 中原): trusted only when the city is known

    @property
    def name(self) -> str:
        return self.places[0].name if self.places else self.surface

    def resolve(self, cities: set[str] | None) -> tuple[Place, ...]:
        """The readings inside ``cities`` (all readings when ``cities`` is empty/None)."""
        if not cities:
            return self.places
        return tuple(p for p in self.places if p.city in cities)


@dataclass(slots=True)
class _CityData:
    code: str
    aliases: list[str]
    district_of: dict[str, str] = field(default_factory=dict)  # 板块 → district
    districts: dict[str, list[str]] = field(default_factory=dict)  # district → 板块
    district_aliases: dict[str, str] = field(default_factory=dict)  # alias → district
    bankuai_aliases: dict[str, str] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)


class Gazetteer:
    """Lookups over the gazetteer data (immutable, thread-safe; use :func:`get_gazetteer`)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.weak: frozenset[str] = frozenset(data.get("weak_bankuai", ()))
        self._cities: dict[str, _CityData] = {}
        self._city_alias: dict[str, str] = {}
        for city, raw in data["cities"].items():
            cd = _CityData(code=raw["code"], aliases=list(raw.get("aliases", ())))
            for district, d in raw["districts"].items():
                cd.districts[district] = list(d["bankuai"])
                cd.district_aliases[district] = district
                for alias in d.get("aliases", ()):
                    cd.district_aliases[alias] = district
                for bk in d["bankuai"]:
                    cd.district_of[bk] = district
            cd.bankuai_aliases = dict(raw.get("bankuai_aliases", {}))
            cd.groups = {k: list(v) for k, v in raw.get("bankuai_groups", {}).items()}
            self._cities[city] = cd
            for alias in (city, f"{city}市", cd.code, *cd.aliases):
                self._city_alias[alias.lower()] = city
        self._index = self._build_index()
        self._max_len = max(len(k) for k in self._index)

    # -- basic lookups --------------------------------------------------------------------
    @property
    def cities(self) -> list[str]:
        return list(self._cities)

    def city_code(self, city: str) -> str:
        return self._cities[city].code

    def city_aliases(self, city: str) -> list[str]:
        """The other names of ``city`` as the data lists them (沪, 上海市, 魔都)."""
        cd = self._cities.get(city)
        return list(cd.aliases) if cd else []

    def city_of(self, name: str) -> str | None:
        """``"上海"``, ``"上海市"``, ``"sh"``, ``"沪"`` → ``"上海"``."""
        return self._city_alias.get(name.strip().lower())

    def city_of_code(self, code: str) -> str | None:
        for city, cd in self._cities.items():
            if cd.code == code.lower():
                return city
        return None

    def districts(self, city: str) -> list[str]:
        return list(self._cities[city].districts)

    def bankuai(self, city: str, district: str | None = None) -> list[str]:
        cd = self._cities[city]
        if district is None:
            return list(cd.district_of)
        return list(cd.districts.get(district, ()))

    def district_aliases(self, city: str, district: str) -> list[str]:
        cd = self._cities.get(city)
        if cd is None:
            return []
        return [a for a, d in cd.district_aliases.items() if d == district and a != district]

    def normalise_district(self, name: str, city: str | None = None) -> str | None:
        """``"浦东"`` → ``"浦东新区"``; None when no city has such a district."""
        name = name.strip()
        for c in [city] if city else self._cities:
            if c is None or c not in self._cities:
                continue
            hit = self._cities[c].district_aliases.get(name)
            if hit:
                return hit
        return None

    def city_of_district(self, district: str) -> str | None:
        for c, cd in self._cities.items():
            if district in cd.districts:
                return c
        return None

    def district_of(self, city: str, bankuai: str, *, fuzzy: bool = True) -> str | None:
        """District of a 板块 in ``city``: exact, alias, suffix-stripped, then fuzzy; else None."""
        bk = self.canonical_bankuai(city, bankuai, fuzzy=fuzzy)
        return self._cities[city].district_of.get(bk) if bk and city in self._cities else None

    def canonical_bankuai(self, city: str, name: str, *, fuzzy: bool = True) -> str | None:
        """The gazetteer's spelling of a 板块 name (``"莘庄镇"`` → ``"莘庄"``), or None."""
        cd = self._cities.get(city)
        if cd is None:
            return None
        name = name.strip()
        if not name:
            return None
        if name in cd.district_of:
            return name
        if name in cd.bankuai_aliases:
            return cd.bankuai_aliases[name]
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) - len(suffix) >= 2:
                stem = name[: -len(suffix)]
                if stem in cd.district_of:
                    return stem
        if not fuzzy or len(name) < 3:
            return None
        best = process.extractOne(name, list(cd.district_of), scorer=fuzz.ratio, score_cutoff=_cutoff(name))
        return best[0] if best else None

    # -- mentions in free text ------------------------------------------------------------
    def _build_index(self) -> dict[str, list[tuple[Place, bool]]]:
        index: dict[str, list[tuple[Place, bool]]] = {}
        for city, cd in self._cities.items():
            for surface, place, weak in self._surfaces(city, cd):
                entries = index.setdefault(surface, [])
                if all(p != place for p, _ in entries):
                    entries.append((place, weak))
        return index

    def _surfaces(self, city: str, cd: _CityData) -> Iterator[tuple[str, Place, bool]]:
        """``(surface, place, weak)`` of one city, in the order that decides which reading of a
        surface comes first: the city, districts, 板块 groups, 板块, their aliases, suffixed 板块."""
        for alias in (city, f"{city}市", *cd.aliases):
            if len(alias) >= 2:
                yield alias, Place("city", city), False
        for alias, district in cd.district_aliases.items():
            yield alias, Place("district", city, district), False
        yield from _group_surfaces(city, cd)
        for bk, district in cd.district_of.items():
            if bk not in cd.district_aliases and bk not in cd.groups:
                yield bk, Place("bankuai", city, district, (bk,)), bk in self.weak
        for alias, bk in cd.bankuai_aliases.items():
            if alias != bk and bk in cd.district_of:
                yield alias, Place("bankuai", city, cd.district_of[bk], (bk,)), False
        yield from _suffixed_surfaces(city, cd)

    def find_mentions(self, text: str) -> list[Mention]:
        """Place names in ``text``, longest match first, left to right, non-overlapping."""
        out: list[Mention] = []
        i, n = 0, len(text)
        while i < n:
            hit = None
            for length in range(min(self._max_len, n - i), 1, -1):
                surface = text[i : i + length]
                entries = self._index.get(surface)
                if entries:
                    hit = Mention(
                        surface=surface,
                        start=i,
                        end=i + length,
                        places=tuple(p for p, _ in entries),
                        weak=all(w for _, w in entries),
                    )
                    break
            if hit is None:
                i += 1
                continue
            out.append(hit)
            i = hit.end
        return out

    def fuzzy_bankuai(self, text: str, city: str | None = None) -> Place | None:
        """Best fuzzy 板块 for an unknown place word (``"陆家咀"`` → 陆家嘴) or None."""
        best: tuple[float, Place] | None = None
        for c in [city] if city else self._cities:
            if c is None or c not in self._cities:
                continue
            cd = self._cities[c]
            res = process.extractOne(
                text, list(cd.district_of), scorer=fuzz.ratio, score_cutoff=_cutoff(text)
            )
            if res and (best is None or res[1] > best[0]):
                best = (float(res[1]), Place("bankuai", c, cd.district_of[res[0]], (res[0],)))
        return best[1] if best else None


def _load_data() -> dict[str, Any]:
    text = resources.files("zhiwen").joinpath(GAZETTEER_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _group_surfaces(city: str, cd: _CityData) -> Iterator[tuple[str, Place, bool]]:
    """板块 groups (one name for several 板块): in a district when all their 板块 are."""
    for group, members in cd.groups.items():
        if group in cd.district_aliases:
            continue
        districts = {cd.district_of[m] for m in members if m in cd.district_of}
        group_district = districts.pop() if len(districts) == 1 else None
        yield group, Place("bankuai", city, group_district, tuple(members)), False


def _suffixed_surfaces(city: str, cd: _CityData) -> Iterator[tuple[str, Place, bool]]:
    # "三林镇", "莘庄板块": the data never has the suffix
    for bk, district in cd.district_of.items():
        for suffix in ("镇", "板块", "地区", "片区", "一带"):
            if not bk.endswith(suffix) and len(bk) >= 2:
                yield bk + suffix, Place("bankuai", city, district, (bk,)), False


@lru_cache(maxsize=1)
def get_gazetteer() -> Gazetteer:
    """The packaged gazetteer, loaded once."""
    return Gazetteer(_load_data())
