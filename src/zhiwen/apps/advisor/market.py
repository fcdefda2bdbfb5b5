"""Market tables over the Lianjia second-hand listings (one snapshot crawled 2019-06-26).

``setup`` reads ``lianjia_ershoufang/ErshoufangSpider_{sh,sz,gz,hz,cd}.csv`` once
(:mod:`zhiwen.corpora.lianjia`: every 板块 with its district), and saves compact rows as JSON
under the app's home folder; queries aggregate them (counts, mean/median unit and total price) by
district, 板块, rooms or building age. The data is ONE snapshot: a "trend" is a comparison by
building year at that moment, never a time series, and every result says so.

Example::

    >>> market = build_market(Path("../shared/data/lianjia_ershoufang"))
    >>> r = market.compare("上海", ["浦东", "闵行"])
    >>> [(d["district"], d["avg_unit_price"]) for d in r["districts"]]      # 元/㎡
    [('浦东', 62234), ('闵行', 50406)]
"""

from __future__ import annotations

import json
import statistics
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from zhiwen.chinese.gazetteer import get_gazetteer
from zhiwen.chinese.places import canonical_district
from zhiwen.corpora.lianjia import FILE_NAME, ListingRow, find_lianjia_dir, read_rows
from zhiwen.errors import NotFound, ToolValidationError

DATA_NOTE = "数据为2019年6月链家挂牌快照（挂牌价，非成交价），仅供参考"
SNAPSHOT_DATE = "2019-06-26"
UNITS = {"unit_price": "元/㎡", "total_price": "万元", "area": "㎡"}
MARKET_FILE = "market.json"
AGE_BANDS: tuple[tuple[str, int, int], ...] = (
    ("2000年以前建成", 0, 1999),
    ("2000–2004年建成", 2000, 2004),
    ("2005–2009年建成", 2005, 2009),
    ("2010–2014年建成", 2010, 2014),
    ("2015年及以后建成", 2015, 9999),
)


@dataclass(frozen=True, slots=True)
class Listing:
    city: str
    district: str
    bankuai: str
    rooms: int | None
    area: float
    total_price: float  # 万元
    unit_price: float  # 元/㎡
    build_year: int | None


def market_listing(row: ListingRow) -> Listing | None:
    """The compact row of one listing; None when it lacks a 板块, a price or an area."""
    if not row.bankuai or not row.total_price or not row.unit_price or not row.area:
        return None
    return Listing(
        city=row.city,
        district=row.district or "未知区",
        bankuai=row.bankuai,
        rooms=row.rooms,
        area=row.area,
        total_price=row.total_price,
        unit_price=row.unit_price,
        build_year=row.floor.build_year,
    )


def stats(rows: Sequence[Listing]) -> dict[str, Any]:
    """Count and mean/median prices of ``rows`` (unit price 元/㎡ whole, total price 万元 .01)."""
    if not rows:
        return {
            "count": 0,
            "avg_unit_price": None,
            "median_unit_price": None,
            "avg_total_price": None,
            "median_total_price": None,
            "avg_area": None,
        }
    units = [r.unit_price for r in rows]
    totals = [r.total_price for r in rows]
    return {
        "count": len(rows),
        "avg_unit_price": round(statistics.fmean(units)),
        "median_unit_price": round(statistics.median(units)),
        "avg_total_price": round(statistics.fmean(totals), 2),
        "median_total_price": round(statistics.median(totals), 2),
        "avg_area": round(statistics.fmean(r.area for r in rows), 2),
    }


def age_band(year: int | None) -> str:
    if year is None:
        return "建成年代未知"
    return next(name for name, lo, hi in AGE_BANDS if lo <= year <= hi)


class MarketData:
    """All listings of the snapshot, with the aggregate queries the market tools expose."""

    def __init__(self, listings: Iterable[Listing]) -> None:
        self.listings = list(listings)
        self.cities = sorted({r.city for r in self.listings}, key=get_gazetteer().cities.index)

    # -- persistence ----------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "snapshot": SNAPSHOT_DATE,
            "fields": list(Listing.__dataclass_fields__),
            "rows": [list(astuple(r)) for r in self.listings],
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> MarketData:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(Listing(*row) for row in data["rows"])

    # -- helpers --------------------------------------------------------------------------------
    def city_name(self, city: str | None) -> str:
        """上海 / 上海市 / 沪 / sh → 上海; unknown → a 2001 error listing the covered cities."""
        gaz = get_gazetteer()
        name = (city or "").strip()
        if name.endswith("市") and len(name) > 2:
            name = name[:-1]
        for full in gaz.cities:
            if (
                name in (full, gaz.city_code(full)) or name in gaz.city_aliases(full)
            ) and full in self.cities:
                return full
        covered = "、".join(self.cities)
        raise ToolValidationError(
            f"no listings for city {city!r}",
            message=f"暂无该城市的挂牌数据：{city or '（未指定）'}（可选：{covered}）",
        )

    def _select(
        self, city: str, district: str | None = None, bankuai: str | None = None, rooms: int | None = None
    ) -> list[Listing]:
        rows = [r for r in self.listings if r.city == city]
        if district:
            canonical = canonical_district(city, district)
            if canonical is None:
                raise ToolValidationError(
                    f"unknown district {district!r}", message=f"无法识别的区：{district}（{city}）"
                )
            rows = [r for r in rows if r.district == canonical]
        if bankuai:
            rows = [r for r in rows if r.bankuai == bankuai.strip()]
        if rooms:
            rows = [r for r in rows if r.rooms == rooms]
        return rows

    # -- queries --------------------------------------------------------------------------------
    def query(
        self,
        city: str,
        *,
        district: str | None = None,
        bankuai: str | None = None,
        rooms: int | None = None,
        group_by: str = "district",
        limit: int = 20,
    ) -> dict[str, Any]:
        """Overall stats of the selection and per-group stats (district, bankuai, rooms, age)."""
        name = self.city_name(city)
        rows = self._select(name, district, bankuai, rooms)
        keys: dict[str, Callable[[Listing], str]] = {
            "district": lambda r: r.district,
            "bankuai": lambda r: r.bankuai,
            "rooms": lambda r: f"{r.rooms}室" if r.rooms else "未知",
            "age": lambda r: age_band(r.build_year),
        }
        groups = _group(rows, keys[group_by])
        ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]
        return {
            "city": name,
            "filters": {"district": district, "bankuai": bankuai, "rooms": rooms},
            "group_by": group_by,
            "overall": stats(rows),
            "groups": [{"name": k, **stats(v)} for k, v in ordered],
            "units": UNITS,
            "data_note": DATA_NOTE,
        }

    def trend(self, city: str, *, district: str | None = None, rooms: int | None = None) -> dict[str, Any]:
        """Prices by building age — the only 'trend' a single snapshot can show."""
        name = self.city_name(city)
        rows = self._select(name, district, None, rooms)
        groups = _group(rows, lambda r: age_band(r.build_year))
        bands = [{"band": b, **stats(groups.get(b, []))} for b, _, _ in AGE_BANDS]
        return {
            "city": name,
            "district": district,
            "rooms": rooms,
            "by_build_year": [b for b in bands if b["count"]],
            "overall": stats(rows),
            "units": UNITS,
            "kind": "按建成年代分组的同期挂牌价对比",
            "data_note": DATA_NOTE + "；只有这一个时点，不能反映价格随时间的涨跌",
        }

    def compare(self, city: str, districts: Sequence[str], *, rooms: int | None = None) -> dict[str, Any]:
        """Stats per district, named as asked (浦东, not 浦东新区), highest unit price first flagged."""
        name = self.city_name(city)
        out = []
        for asked in districts:
            canonical = canonical_district(name, asked)
            if canonical is None:
                raise ToolValidationError(
                    f"unknown district {asked!r}", message=f"无法识别的区：{asked}（{name}）"
                )
            row_stats = stats(self._select(name, asked, None, rooms))
            out.append({"district": asked, "canonical": canonical, **row_stats})
        priced = [d for d in out if d["avg_unit_price"] is not None]
        top = max(priced, key=lambda d: d["avg_unit_price"]) if priced else None
        bottom = min(priced, key=lambda d: d["avg_unit_price"]) if priced else None
        highest = top["district"] if top else None
        lowest = bottom["district"] if bottom else None
        # how much dearer the dearest district is than the cheapest, by mean unit price
        gap = (
            round((top["avg_unit_price"] / bottom["avg_unit_price"] - 1) * 100, 1) if top and bottom else None
        )
        return {
            "city": name,
            "rooms": rooms,
            "districts": out,
            "highest": highest,
            "lowest": lowest,
            "gap_percent": gap,
            "units": UNITS,
            "data_note": DATA_NOTE,
        }

    def affordable(
        self, city: str, max_total_price_wan: float, *, rooms: int | None = None
    ) -> list[dict[str, Any]]:
        """Districts whose median listing total price is within ``max_total_price_wan`` (万元)."""
        name = self.city_name(city)
        rows = self._select(name, None, None, rooms)
        groups = _group(rows, lambda r: r.district)
        fits = [
            {"district": d, **stats(v)}
            for d, v in groups.items()
            if len(v) >= 5 and statistics.median(r.total_price for r in v) <= max_total_price_wan
        ]
        return sorted(fits, key=lambda d: -d["median_total_price"])


def _group(rows: Iterable[Listing], key: Callable[[Listing], str]) -> dict[str, list[Listing]]:
    groups: dict[str, list[Listing]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def build_market(data_dir: Path) -> MarketData:
    """Read every city's CSV under ``data_dir`` (or its ``lianjia_ershoufang/``)."""
    folder = find_lianjia_dir(data_dir)
    gaz = get_gazetteer()
    listings: list[Listing] = []
    for city in gaz.cities:
        path = folder / FILE_NAME.format(code=gaz.city_code(city))
        if path.is_file():
            listings += [item for row in read_rows(path, city, gaz) if (item := market_listing(row))]
    return MarketData(listings)


_CACHE: dict[Path, tuple[float, MarketData]] = {}
_CACHE_LOCK = threading.Lock()


def market_path(home: Path) -> Path:
    return home / "apps" / "advisor" / MARKET_FILE


def load_market(home: Path) -> MarketData:
    """The market tables ``setup`` saved under ``home`` (re-read when the file changes)."""
    path = market_path(home)
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        raise NotFound(
            f"{path} missing", message="市场数据尚未构建，请先运行：zhiwen advisor setup DATA_DIR"
        ) from None
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
        if cached is None or cached[0] != mtime:
            cached = (mtime, MarketData.load(path))
            _CACHE[path] = cached
        return cached[1]
