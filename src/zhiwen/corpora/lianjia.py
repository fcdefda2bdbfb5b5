"""Lianjia second-hand listings (``ErshoufangSpider_<city code>.csv``, one snapshot crawled in 2019).

One row is one listing; :func:`read_rows` types it (:class:`ListingRow`): numbers as numbers
(None when the cell is empty or unreadable), the 板块's district from the gazetteer (None when
the 板块 is unknown), and the packed columns parsed:

===============  ========================================================================
column           read as
===============  ========================================================================
``location``     ``bankuai`` (板块) and its ``district`` (:mod:`zhiwen.chinese.gazetteer`)
``total_price``  ``total_price``, 万元; ``unit_price`` 元/㎡; ``area`` ㎡
``room``         :func:`parse_room`: ``联排别墅 | 4室2厅`` → rooms, halls, layout, property type
``flood``        :func:`parse_floor`: ``中楼层(共6层)1997年建板楼`` → level, floors, year, building
``orientation``  :func:`parse_orientation`: ``南 北`` → facing south, north-south, north only
``elevator``     True (有电梯) / False (无电梯) / None
===============  ========================================================================

A file's city comes from its name (``_sh.csv``) or is given; :func:`lianjia_files` lists a
folder's files with their cities, :func:`find_lianjia_dir` finds the folder under a data
directory.

Example::

    >>> rows = list(read_rows(Path("lianjia_ershoufang/ErshoufangSpider_sh.csv"), "上海"))
    >>> rows[0].district, rows[0].total_price, rows[0].floor.build_year
    ('宝山区', 280.0, 2006)
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zhiwen.chinese.gazetteer import Gazetteer, get_gazetteer
from zhiwen.errors import IngestError
from zhiwen.ingest._io import read_utf8

REQUIRED_COLUMNS = ("house_id", "title", "total_price", "area", "room", "location")
FILE_NAME = "ErshoufangSpider_{code}.csv"
DIR_NAME = "lianjia_ershoufang"  # the folder of the public crawl under a data directory

_FLOOR_RE = re.compile(
    r"^\s*(?:(?P<level>[^\s(（]*?楼层|上叠|下叠|地下室|底层|顶层)?\s*[(（]共(?P<total>\d+)层[)）]|(?P<total2>\d+)层)?"
    r"\s*(?:(?P<year>\d{4})年建)?\s*(?P<btype>板楼|塔楼|板塔结合|平房|暂无数据)?\s*$"
)
_ROOM_RE = re.compile(r"(?P<rooms>\d+)\s*室\s*(?P<halls>\d+)\s*厅")
_FILE_CITY_RE = re.compile(r"_(sh|sz|gz|hz|cd)\.csv$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FloorInfo:
    level: str | None
    total_floors: int | None
    build_year: int | None
    building_type: str | None


@dataclass(frozen=True, slots=True)
class Orientation:
    text: str  # "南 北"
    facing_south: bool  # an exact 南 among the orientations
    north_south: bool  # 南 and 北
    north_only: bool  # only 北, 东北, 西北


@dataclass(frozen=True, slots=True)
class ListingRow:
    """One listing as the export has it, typed (see the module docstring)."""

    city: str
    house_id: str
    title: str  # whitespace collapsed
    bankuai: str
    district: str | None
    xiaoqu: str
    total_price: float | None  # 万元
    unit_price: float | None  # 元/㎡
    area: float | None  # ㎡
    rooms: int | None
    halls: int | None
    layout: str  # 2室1厅
    property_type: str  # 普通住宅, 联排别墅 …
    floor: FloorInfo
    orientation: Orientation
    elevator: bool | None
    decoration: str | None
    follow_number: int


def parse_floor(text: str) -> FloorInfo:
    """``中楼层(共6层)1997年建板楼`` → (中楼层, 6, 1997, 板楼); unknown parts are None."""
    m = _FLOOR_RE.match(text or "")
    if not m:
        return FloorInfo(None, None, None, None)
    total = m.group("total") or m.group("total2")
    btype = m.group("btype")
    return FloorInfo(
        level=m.group("level") or None,
        total_floors=int(total) if total else None,
        build_year=int(m.group("year")) if m.group("year") else None,
        building_type=None if btype in (None, "暂无数据") else btype,
    )


def parse_room(text: str) -> tuple[int | None, int | None, str, str]:
    """``联排别墅 | 4室2厅`` → (4, 2, "4室2厅", "联排别墅"); plain rows are 普通住宅."""
    ptype = "普通住宅"
    layout = (text or "").strip()
    if "|" in layout:
        head, _, layout = layout.partition("|")
        ptype = head.strip().replace("暂无数据", "") or ptype
        layout = layout.strip()
    m = _ROOM_RE.search(layout)
    if not m:
        return None, None, layout, ptype
    return int(m.group("rooms")), int(m.group("halls")), layout, ptype


def parse_orientation(text: str) -> tuple[str, bool, bool, bool]:
    """``南 北`` → ("南 北", facing_south, north_south, north_only)."""
    parts = [p for p in (text or "").split() if p]
    south = "南" in parts
    north = "北" in parts
    north_only = bool(parts) and all(p in ("北", "东北", "西北") for p in parts)
    return " ".join(parts), south, south and north, north_only


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def _count(value: str | None) -> int:
    number = _num(value)
    return int(number) if number is not None and math.isfinite(number) else 0


def _elevator(text: str | None) -> bool | None:
    value = (text or "").strip()
    return True if value == "有电梯" else False if value == "无电梯" else None


def typed_row(row: dict[str, str], city: str, gaz: Gazetteer) -> ListingRow:
    """One CSV row (a ``csv.DictReader`` dict) → a :class:`ListingRow` of ``city``."""
    bankuai = (row.get("location") or "").strip()
    rooms, halls, layout, ptype = parse_room(row.get("room", ""))
    return ListingRow(
        city=city,
        house_id=(row.get("house_id") or "").strip(),
        title=" ".join((row.get("title") or "").split()),
        bankuai=bankuai,
        district=gaz.district_of(city, bankuai) if bankuai else None,
        xiaoqu=(row.get("xiaoqu") or "").strip(),
        total_price=_num(row.get("total_price")),
        unit_price=_num(row.get("unit_price")),
        area=_num(row.get("area")),
        rooms=rooms,
        halls=halls,
        layout=layout,
        property_type=ptype,
        floor=parse_floor(row.get("flood", "")),
        orientation=Orientation(*parse_orientation(row.get("orientation", ""))),
        elevator=_elevator(row.get("elevator")),
        decoration=(row.get("decoration") or "").strip() or None,
        follow_number=_count(row.get("follow_number")),
    )


def csv_rows(path: Path) -> csv.DictReader[str]:
    """The file's rows as dicts; :class:`IngestError` when it is not UTF-8 or lacks a column."""
    reader = csv.DictReader(read_utf8(path).splitlines())
    header = set(reader.fieldnames or [])
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise IngestError(
            f"{path}: missing columns {missing}; is this a Lianjia ErshoufangSpider CSV?",
            message=f"导入失败：CSV 缺少列 {', '.join(missing)}：{path.name}",
        )
    return reader


def read_rows(path: Path, city: str, gaz: Gazetteer | None = None) -> Iterator[ListingRow]:
    """Every row of one city's file, typed (see :func:`csv_rows` for the errors)."""
    gaz = gaz or get_gazetteer()
    for row in csv_rows(path):
        yield typed_row(row, city, gaz)


# -- files and folders --------------------------------------------------------------------------
def city_of_file(path: Path, city: str | None, gaz: Gazetteer) -> str:
    """The city of ``path``: ``city`` (上海 / sh / 上海市) when given, else from ``_sh.csv``."""
    if city:
        resolved = gaz.city_of(str(city))
        if resolved is None:
            raise IngestError(
                f"unknown city {city!r}; known: {', '.join(gaz.cities)}",
                message=f"导入失败：不支持的城市「{city}」，支持：{'、'.join(gaz.cities)}",
            )
        return resolved
    m = _FILE_CITY_RE.search(path.name)
    resolved = gaz.city_of_code(m.group(1)) if m else None
    if resolved is None:
        raise IngestError(
            f"{path}: cannot infer the city from the file name; pass --city",
            message=f"导入失败：无法从文件名判断城市，请用 --city 指定：{path.name}",
        )
    return resolved


def lianjia_files(path: Path, city: str | None, gaz: Gazetteer) -> list[Path]:
    """The CSV file, or the folder's CSV files (only ``city``'s when it is given), by name."""
    files = [path] if path.is_file() else sorted(path.glob("*.csv"))
    if not files:
        raise IngestError(f"no .csv files in {path}", message=f"导入失败：目录中没有 CSV 文件：{path}")
    if path.is_dir() and city:
        # "--city 上海 <dir>": only that city's file(s); files without a city code take the city
        wanted = city_of_file(path, city, gaz)
        files = [f for f in files if not _FILE_CITY_RE.search(f.name) or city_of_file(f, None, gaz) == wanted]
        if not files:
            raise IngestError(
                f"no CSV for {wanted} in {path}", message=f"导入失败：目录中没有{wanted}的房源文件：{path}"
            )
    return files


def sniff_lianjia(path: Path) -> bool:
    """A Lianjia export: a CSV (or a folder of them) whose header has the listing columns."""
    files = [path] if path.is_file() else sorted(path.glob("*.csv"))[:3]
    for f in files:
        if f.suffix.lower() != ".csv":
            continue
        try:
            with f.open(encoding="utf-8", errors="ignore", newline="") as fh:
                header = next(csv.reader(fh), [])
        except OSError:
            continue
        if set(REQUIRED_COLUMNS) <= {h.strip() for h in header}:
            return True
    return False


def find_lianjia_dir(data_dir: Path) -> Path:
    """``data_dir``'s ``lianjia_ershoufang/`` folder, or ``data_dir`` itself, whichever holds
    Lianjia CSVs; :class:`IngestError` when neither does."""
    for candidate in (data_dir / DIR_NAME, data_dir):
        if candidate.is_dir() and sniff_lianjia(candidate):
            return candidate
    raise IngestError(
        f"no Lianjia CSVs under {data_dir}",
        message=f"未在 {data_dir} 下找到链家房源 CSV（{DIR_NAME}）",
    )


__all__ = [
    "FILE_NAME",
    "REQUIRED_COLUMNS",
    "FloorInfo",
    "ListingRow",
    "Orientation",
    "city_of_file",
    "csv_rows",
    "find_lianjia_dir",
    "lianjia_files",
    "parse_floor",
    "parse_orientation",
    "parse_room",
    "read_rows",
    "sniff_lianjia",
    "typed_row",
]
