"""What a home-buyer asked for: :class:`Requirements`, filled by the extractors.

Prices are in 万元, unit prices in 元/㎡ (the data's unit: "单价6万" = 60000), areas in ㎡.
``None`` or an empty list means "not asked". Hard constraints (price, place, rooms, area,
elevator, decoration, floor band, building type …) become store filters in
:mod:`~zhiwen.apps.listings.filters`; ``negations`` are soft (ranked lower, never excluded).

Example::

    >>> req = Requirements(price_max=800.0, rooms_min=2, rooms_max=2, unit_price_max=60000.0)
    >>> req.price_text(), req.rooms_text(), req.unit_price_text()
    ('0-800万', '2室', '单价6万元/㎡以下')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from zhiwen.chinese.gazetteer import Place


def add_unique(values: list[str], value: str) -> None:
    """Append ``value`` unless it is empty or already there (lists keep the question's order)."""
    if value and value not in values:
        values.append(value)


def _range_text(lo: float | None, hi: float | None, unit: str, below: str, above: str) -> str:
    if lo is not None and hi is not None:
        return f"{lo:g}-{hi:g}{unit}"
    if hi is not None:
        return f"{hi:g}{unit}{below}"
    if lo is not None:
        return f"{lo:g}{unit}{above}"
    return ""


@dataclass(slots=True)
class Requirements:
    """What the buyer asked for. Prices in 万元, areas in ㎡. ``None`` / empty = not asked."""

    price_min: float | None = None
    price_max: float | None = None
    price_target: float | None = None  # "左右": the centre the user named
    unit_price_max: float | None = None  # 元/㎡
    unit_price_min: float | None = None
    cities: list[str] = field(default_factory=list)
    places: list[Place] = field(default_factory=list)  # districts / 板块 asked for
    exclude_places: list[Place] = field(default_factory=list)
    estates: list[str] = field(default_factory=list)  # 小区 keywords
    location_keywords: list[str] = field(default_factory=list)  # 地铁, 学区, 商圈 … nearby
    property_type: str | None = None
    area_min: float | None = None
    area_max: float | None = None
    rooms_min: int | None = None
    rooms_max: int | None = None
    halls: int | None = None
    elevator: bool | None = None
    decoration_in: list[str] = field(default_factory=list)
    decoration_exclude: list[str] = field(default_factory=list)
    floor_in: list[str] = field(default_factory=list)  # 低楼层 / 中楼层 / 高楼层 (hard)
    floor_exclude: list[str] = field(default_factory=list)
    build_year_min: int | None = None
    build_year_max: int | None = None
    facing_south: bool | None = None
    north_south: bool | None = None
    exclude_north: bool = False
    building_type: list[str] = field(default_factory=list)  # 板楼 / 塔楼 / 板塔结合 wanted
    building_type_exclude: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)
    negations: list[str] = field(default_factory=list)  # soft: penalised in the re-score (一楼, 顶楼 …)
    keywords: list[str] = field(default_factory=list)  # other words worth matching (号线, 路名)
    vague: list[str] = field(default_factory=list)
    unknown_city: str | None = None
    source: str = "rules"  # rules | rules+llm

    # -- views ---------------------------------------------------------------------------
    @property
    def districts(self) -> list[str]:
        return [p.district for p in self.places if p.kind == "district" and p.district]

    @property
    def bankuai(self) -> list[str]:
        return [b for p in self.places if p.kind == "bankuai" for b in p.bankuai]

    @property
    def has_price(self) -> bool:
        return self.price_min is not None or self.price_max is not None

    @property
    def has_unit_price(self) -> bool:
        return self.unit_price_min is not None or self.unit_price_max is not None

    @property
    def has_area(self) -> bool:
        return self.area_min is not None or self.area_max is not None

    @property
    def has_rooms(self) -> bool:
        return self.rooms_min is not None or self.rooms_max is not None

    @property
    def has_build_year(self) -> bool:
        return self.build_year_min is not None or self.build_year_max is not None

    def price_text(self) -> str:
        lo, hi = self.price_min, self.price_max
        if hi is not None and lo is None:
            return f"0-{hi:g}万"
        return _range_text(lo, hi, "万", "以下", "以上")

    def unit_price_text(self) -> str:
        """``单价6万元/㎡以下``, ``单价5-6万元/㎡``: the data's 元/㎡ written in 万 as buyers say it."""
        lo = None if self.unit_price_min is None else self.unit_price_min / 1e4
        hi = None if self.unit_price_max is None else self.unit_price_max / 1e4
        text = _range_text(lo, hi, "万元/㎡", "以下", "以上")
        return f"单价{text}" if text else ""

    def area_text(self) -> str:
        return _range_text(self.area_min, self.area_max, "㎡", "以下", "以上")

    def rooms_text(self) -> str:
        lo, hi = self.rooms_min, self.rooms_max
        if lo is not None and hi is not None:
            return f"{lo}室" if lo == hi else f"{lo}-{hi}室"
        if lo is not None:
            return f"{lo}室及以上"
        if hi is not None:
            return f"{hi}室及以下"
        return ""

    def location_text(self) -> str:
        return "、".join(p.name for p in self.places)

    def dimensions(self) -> list[str]:
        """The dimensions found (price, location, area, type …, rooms, elevator): drive quality, dynamic_k."""
        found = {
            "price_range": self.has_price or self.has_unit_price,
            "location": bool(self.places or self.estates or self.location_keywords or self.exclude_places),
            "property_type": bool(self.property_type),
            "area": self.has_area,
            "rooms": self.has_rooms,
            "special_requirements": bool(
                self.special
                or self.elevator is not None
                or self.decoration_in
                or self.facing_south
                or self.north_south
                or self.floor_in
                or self.build_year_min
                or self.building_type
            ),
            "negations": bool(
                self.negations
                or self.decoration_exclude
                or self.floor_exclude
                or self.exclude_north
                or self.building_type_exclude
            ),
        }
        return [name for name, yes in found.items() if yes]

    def summary(self) -> dict[str, Any]:
        """JSON-friendly view (the API's ``requirements``)."""
        out: dict[str, Any] = {
            "price_range": self.price_text() or None,
            "unit_price": self.unit_price_text() or None,
            "location": self.location_text() or None,
            "cities": self.cities,
            "districts": self.districts,
            "bankuai": self.bankuai,
            "exclude_locations": [p.name for p in self.exclude_places],
            "estates": self.estates,
            "location_keywords": self.location_keywords,
            "property_type": self.property_type,
            "area": self.area_text() or None,
            "rooms": self.rooms_text() or None,
            "halls": self.halls,
            "elevator": self.elevator,
            "decoration": self.decoration_in,
            "exclude_decoration": self.decoration_exclude,
            "floor": self.floor_in,
            "exclude_floor": self.floor_exclude,
            "building_type": self.building_type,
            "exclude_building_type": self.building_type_exclude,
            "build_year_min": self.build_year_min,
            "build_year_max": self.build_year_max,
            "facing_south": self.facing_south,
            "north_south": self.north_south,
            "special_requirements": self.special,
            "negations": self.negations,
            "source": self.source,
        }
        return {k: v for k, v in out.items() if v not in (None, [], False)}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["places"] = [asdict(p) for p in self.places]
        d["exclude_places"] = [asdict(p) for p in self.exclude_places]
        return d


__all__ = ["Requirements", "add_unique"]
