"""Lianjia second-hand listings (``ErshoufangSpider_*.csv``) → typed listing documents.

One CSV row becomes one :class:`~zhiwen.documents.Document` and one chunk with the same id,
``lianjia-<city code>-<house_id>``. The text is a Chinese description composed from the title
and the parsed fields, so BM25 and the dense branch can match 板块 / 小区 / 精装 / 地铁 words; the
metadata carries the typed fields (numbers as numbers, so range filters work):

===============  ========================================================================
field            meaning (source column)
===============  ========================================================================
city, district   城市; 区 from the gazetteer (None when the 板块 is unknown: counted warning)
bankuai, xiaoqu  板块 (``location``), 小区 (``xiaoqu``)
price            总价, 万元 (``total_price``); unit_price 元/㎡ (``unit_price``)
area             建筑面积 ㎡; rooms, halls, layout from ``2室1厅``; property_type 别墅/普通住宅
floor_level      低楼层/中楼层/高楼层/上叠/下叠 (None when only ``6层``), total_floors, floor
build_year       建成年份 (None when absent), building_type 板楼/塔楼/板塔结合/平房
elevator         True/False/None; decoration 精装/简装/毛坯/其他; orientation ``南 北``
facing_south     an exact 南 among the orientations; north_south 南 and 北; north_only
near_metro ...   flags read from the title: near_metro, school, man_wu (满五), man_er (满二)
===============  ========================================================================

Example::

    >>> corpus = load_lianjia(Path("../shared/data/lianjia_ershoufang/ErshoufangSpider_sh.csv"))
    >>> corpus.documents[0].metadata["district"], corpus.documents[0].metadata["price"]
    ('宝山区', 280.0)
"""

from __future__ import annotations

import csv
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zhiwen.apps.listings.gazetteer import Gazetteer, get_gazetteer
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest._io import read_utf8, require_path
from zhiwen.ingest.base import Corpus

log = logging.getLogger(__name__)

_FLOOR_RE = re.compile(
    r"^\s*(?:(?P<level>[^\s(（]*?楼层|上叠|下叠|地下室|底层|顶层)?\s*[(（]共(?P<total>\d+)层[)）]|(?P<total2>\d+)层)?"
    r"\s*(?:(?P<year>\d{4})年建)?\s*(?P<btype>板楼|塔楼|板塔结合|平房|暂无数据)?\s*$"
)
_ROOM_RE = re.compile(r"(?P<rooms>\d+)\s*室\s*(?P<halls>\d+)\s*厅")
_FILE_CITY_RE = re.compile(r"_(sh|sz|gz|hz|cd)\.csv$", re.IGNORECASE)
VILLA_TYPES = ("联排别墅", "独栋别墅", "叠拼别墅", "双拼别墅", "别墅")
METRO_RE = re.compile(r"地铁|轨交|轨道交通|\d+\s*号线|号线|站旁|地铁站|双轨")
SCHOOL_RE = re.compile(r"学区|对口|名校|学校|小学|中学|双学区|入学|学位")
MAN_WU_RE = re.compile(r"满[五5]|满五唯一|唯一住房")
MAN_ER_RE = re.compile(r"满[二两2]")
REQUIRED_COLUMNS = ("house_id", "title", "total_price", "area", "room", "location")


@dataclass(frozen=True, slots=True)
class FloorInfo:
    level: str | None
    total_floors: int | None
    build_year: int | None
    building_type: str | None


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


def _fmt_num(x: float) -> str:
    return f"{x:g}"


def compose_text(meta: dict[str, Any], title: str, district_aliases: list[str]) -> str:
    """The searchable Chinese description of one listing."""
    where = "".join(x for x in (meta["city"], meta.get("district") or "") if x)
    alias = f"（{'、'.join(district_aliases)}）" if district_aliases else ""
    parts = [f"{title}。" if title else ""]
    parts.append(f"{meta['xiaoqu']}小区，位于{where}{alias}{meta['bankuai']}板块。")
    parts.append("，".join(_spec_phrases(meta)) + "。")
    build = _building_phrases(meta)
    if build:
        parts.append("，".join(build) + "。")
    return "".join(parts)


def _spec_phrases(meta: dict[str, Any]) -> list[str]:
    """Type, layout, area and price: 两室一厅，建筑面积89平米，总价300万."""
    spec = []
    if meta.get("property_type") and meta["property_type"] != "普通住宅":
        spec.append(meta["property_type"])
    if meta.get("layout"):
        spec.append(meta["layout"])
    if meta.get("area") is not None:
        spec.append(f"建筑面积{_fmt_num(meta['area'])}平米")
    spec.append(f"总价{_fmt_num(meta['price'])}万")
    if meta.get("unit_price"):
        spec.append(f"单价{meta['unit_price']}元/平米")
    return spec


def _building_phrases(meta: dict[str, Any]) -> list[str]:
    """Floor, age, building, decoration, elevator and orientation (only what is known)."""
    build = []
    if meta.get("floor"):
        build.append(meta["floor"])
    if meta.get("build_year"):
        build.append(f"{meta['build_year']}年建")
    if meta.get("building_type"):
        build.append(meta["building_type"])
    if meta.get("decoration") and meta["decoration"] != "其他":
        build.append(meta["decoration"] + ("修" if meta["decoration"].endswith("装") else ""))
    if meta.get("elevator") is not None:
        build.append("有电梯" if meta["elevator"] else "无电梯")
    if meta.get("orientation"):
        build.append(f"朝{meta['orientation'].replace(' ', '')}")
    return build


def parse_row(row: dict[str, str], city: str, gaz: Gazetteer) -> tuple[Document, Chunk, bool]:
    """One CSV row → (document, chunk, district_known). Raises ValueError on an unusable row."""
    house_id = (row.get("house_id") or "").strip()
    price = _num(row.get("total_price"))
    if not house_id or price is None:
        raise ValueError("missing house_id or total_price")
    title = " ".join((row.get("title") or "").split())
    bankuai = (row.get("location") or "").strip()
    district = gaz.district_of(city, bankuai) if bankuai else None
    rooms, halls, layout, ptype = parse_room(row.get("room", ""))
    floor = parse_floor(row.get("flood", ""))
    orientation, south, north_south, north_only = parse_orientation(row.get("orientation", ""))
    elevator_raw = (row.get("elevator") or "").strip()
    elevator = True if elevator_raw == "有电梯" else False if elevator_raw == "无电梯" else None
    if floor.level in ("上叠", "下叠") and ptype == "普通住宅":
        ptype = "叠拼别墅"
    unit_price = _num(row.get("unit_price"))
    floor_text = ""
    if floor.level and floor.total_floors:
        floor_text = f"{floor.level}/共{floor.total_floors}层"
    elif floor.total_floors:
        floor_text = f"共{floor.total_floors}层"
    meta: dict[str, Any] = {
        "city": city,
        "district": district,
        "bankuai": bankuai,
        "xiaoqu": (row.get("xiaoqu") or "").strip(),
        "title": title,
        "house_id": house_id,
        "price": price,
        "unit_price": int(unit_price) if unit_price is not None else None,
        "area": _num(row.get("area")),
        "rooms": rooms,
        "halls": halls,
        "layout": layout,
        "property_type": ptype,
        "is_villa": ptype != "普通住宅",
        "floor_level": floor.level,
        "total_floors": floor.total_floors,
        "floor": floor_text,
        "build_year": floor.build_year,
        "building_type": floor.building_type,
        "elevator": elevator,
        "decoration": (row.get("decoration") or "").strip() or None,
        "orientation": orientation,
        "facing_south": south,
        "north_south": north_south,
        "north_only": north_only,
        "near_metro": bool(METRO_RE.search(title)),
        "school": bool(SCHOOL_RE.search(title)),
        "man_wu": bool(MAN_WU_RE.search(title)),
        "man_er": bool(MAN_ER_RE.search(title)),
        "follow_number": int(_num(row.get("follow_number")) or 0),
        "source": "lianjia",
    }
    aliases = []
    if district:
        # old names (闸北, 南汇) help BM25; prefixes (浦东) are already tokens of 浦东新区
        aliases = [a for a in gaz.district_aliases(city, district) if a not in district][:2]
    doc_id = f"lianjia-{gaz.city_code(city)}-{house_id}"
    text = compose_text(meta, title, aliases)
    doc = Document(id=doc_id, text=text, title=title or meta["xiaoqu"], metadata=meta)
    chunk = Chunk(id=doc_id, doc_id=doc_id, text=text, title="", parent_id=doc_id, metadata=meta)
    return doc, chunk, district is not None


def _city_for(path: Path, city: str | None, gaz: Gazetteer) -> str:
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


def load_lianjia(path: Path | str, *, city: str | None = None, limit: int | None = None, **_: Any) -> Corpus:
    """Load one Lianjia CSV (or a directory of ``ErshoufangSpider_*.csv``) into a Corpus.

    ``city`` (上海 / sh / 上海市) overrides the city inferred from ``_sh.csv``-style file
    names; with a directory it selects that city's file. ``limit`` keeps the first N rows of
    each file (tests).
    """
    path = require_path(Path(path))
    gaz = get_gazetteer()
    listings = _Listings()
    for f in _lianjia_files(path, city, gaz):
        file_city = _city_for(f, city, gaz)  # before the columns: the error a user sees first
        listings.add_file(f, _lianjia_reader(f), file_city, gaz, limit)
    if not listings.docs:
        raise IngestError(f"no listings in {path}", message=f"导入失败：未找到任何房源：{path}")
    return Corpus(
        documents=listings.docs,
        chunks=listings.chunks,
        kb_defaults={"app": "listings"},
        warnings=listings.warnings,
    )


def _lianjia_files(path: Path, city: str | None, gaz: Gazetteer) -> list[Path]:
    """The CSV file, or the directory's CSV files (only ``city``'s when it is given)."""
    files = [path] if path.is_file() else sorted(path.glob("*.csv"))
    if not files:
        raise IngestError(f"no .csv files in {path}", message=f"导入失败：目录中没有 CSV 文件：{path}")
    if path.is_dir() and city:
        # "--city 上海 <dir>": only that city's file(s); files without a city code take the city
        wanted = _city_for(path, city, gaz)
        files = [f for f in files if not _FILE_CITY_RE.search(f.name) or _city_for(f, None, gaz) == wanted]
        if not files:
            raise IngestError(
                f"no CSV for {wanted} in {path}", message=f"导入失败：目录中没有{wanted}的房源文件：{path}"
            )
    return files


def _lianjia_reader(f: Path) -> csv.DictReader[str]:
    """The file's rows; :class:`IngestError` when it lacks a required column."""
    reader = csv.DictReader(read_utf8(f).splitlines())
    header = set(reader.fieldnames or [])
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise IngestError(
            f"{f}: missing columns {missing}; is this a Lianjia ErshoufangSpider CSV?",
            message=f"导入失败：CSV 缺少列 {', '.join(missing)}：{f.name}",
        )
    return reader


@dataclass
class _Listings:
    """The listings read so far: the first of each house id, and a warning per file and kind of
    row that needs a look."""

    docs: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def add_file(
        self, f: Path, reader: csv.DictReader[str], file_city: str, gaz: Gazetteer, limit: int | None
    ) -> None:
        unknown: Counter[str] = Counter()
        bad = 0
        for n, row in enumerate(reader):
            if limit is not None and n >= limit:
                break
            try:
                doc, chunk, known = parse_row(row, file_city, gaz)
            except ValueError:
                bad += 1
                continue
            if doc.id in self.seen:
                continue
            self.seen.add(doc.id)
            if not known:
                unknown[doc.metadata["bankuai"]] += 1
            self.docs.append(doc)
            self.chunks.append(chunk)
        self._warn(f, bad, unknown)

    def _warn(self, f: Path, bad: int, unknown: Counter[str]) -> None:
        if bad:
            self.warnings.append(f"{f.name}: 跳过 {bad} 行无效数据（缺少 house_id 或总价）")
        if unknown:
            self.warnings.append(
                f"{f.name}: {sum(unknown.values())} 套房源的板块不在地名表中，区为空："
                + "、".join(k for k, _ in unknown.most_common(10))
            )
            log.warning("%s: %d listings with unknown 板块 %s", f.name, sum(unknown.values()), dict(unknown))
