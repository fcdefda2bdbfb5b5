"""Lianjia second-hand listings → typed listing documents (the listings app's use of the rows).

The rows are read by :mod:`zhiwen.corpora.lianjia`; one row becomes one
:class:`~zhiwen.documents.Document` and one chunk with the same id, ``lianjia-<city code>-<house_id>``.
The text is a Chinese description composed from the title and the parsed fields, so BM25 and the
dense branch can match 板块 / 小区 / 精装 / 地铁 words; the metadata carries the typed fields
(numbers as numbers, so range filters work):

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

from zhiwen.chinese.gazetteer import Gazetteer, get_gazetteer
from zhiwen.corpora.lianjia import ListingRow, city_of_file, csv_rows, lianjia_files, typed_row
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest._io import require_path
from zhiwen.ingest.base import Corpus

log = logging.getLogger(__name__)

VILLA_TYPES = ("联排别墅", "独栋别墅", "叠拼别墅", "双拼别墅", "别墅")
METRO_RE = re.compile(r"地铁|轨交|轨道交通|\d+\s*号线|号线|站旁|地铁站|双轨")
SCHOOL_RE = re.compile(r"学区|对口|名校|学校|小学|中学|双学区|入学|学位")
MAN_WU_RE = re.compile(r"满[五5]|满五唯一|唯一住房")
MAN_ER_RE = re.compile(r"满[二两2]")


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


def _floor_text(row: ListingRow) -> str:
    if row.floor.level and row.floor.total_floors:
        return f"{row.floor.level}/共{row.floor.total_floors}层"
    if row.floor.total_floors:
        return f"共{row.floor.total_floors}层"
    return ""


def _metadata(row: ListingRow) -> dict[str, Any]:
    """The typed fields of one listing (see the module docstring)."""
    ptype = row.property_type
    if row.floor.level in ("上叠", "下叠") and ptype == "普通住宅":
        ptype = "叠拼别墅"
    return {
        "city": row.city,
        "district": row.district,
        "bankuai": row.bankuai,
        "xiaoqu": row.xiaoqu,
        "title": row.title,
        "house_id": row.house_id,
        "price": row.total_price,
        "unit_price": int(row.unit_price) if row.unit_price is not None else None,
        "area": row.area,
        "rooms": row.rooms,
        "halls": row.halls,
        "layout": row.layout,
        "property_type": ptype,
        "is_villa": ptype != "普通住宅",
        "floor_level": row.floor.level,
        "total_floors": row.floor.total_floors,
        "floor": _floor_text(row),
        "build_year": row.floor.build_year,
        "building_type": row.floor.building_type,
        "elevator": row.elevator,
        "decoration": row.decoration,
        "orientation": row.orientation.text,
        "facing_south": row.orientation.facing_south,
        "north_south": row.orientation.north_south,
        "north_only": row.orientation.north_only,
        "near_metro": bool(METRO_RE.search(row.title)),
        "school": bool(SCHOOL_RE.search(row.title)),
        "man_wu": bool(MAN_WU_RE.search(row.title)),
        "man_er": bool(MAN_ER_RE.search(row.title)),
        "follow_number": row.follow_number,
        "source": "lianjia",
    }


def listing_document(row: ListingRow, gaz: Gazetteer) -> tuple[Document, Chunk]:
    """One listing → (document, chunk). Raises ValueError on an unusable row (no house id or
    total price)."""
    if not row.house_id or row.total_price is None:
        raise ValueError("missing house_id or total_price")
    meta = _metadata(row)
    aliases = []
    if row.district:
        # old names (闸北, 南汇) help BM25; prefixes (浦东) are already tokens of 浦东新区
        aliases = [a for a in gaz.district_aliases(row.city, row.district) if a not in row.district][:2]
    doc_id = f"lianjia-{gaz.city_code(row.city)}-{row.house_id}"
    text = compose_text(meta, row.title, aliases)
    doc = Document(id=doc_id, text=text, title=row.title or meta["xiaoqu"], metadata=meta)
    chunk = Chunk(id=doc_id, doc_id=doc_id, text=text, title="", parent_id=doc_id, metadata=meta)
    return doc, chunk


def load_lianjia(path: Path | str, *, city: str | None = None, limit: int | None = None, **_: Any) -> Corpus:
    """Load one Lianjia CSV (or a directory of ``ErshoufangSpider_*.csv``) into a Corpus.

    ``city`` (上海 / sh / 上海市) overrides the city inferred from ``_sh.csv``-style file
    names; with a directory it selects that city's file. ``limit`` keeps the first N rows of
    each file (tests).
    """
    path = require_path(Path(path))
    gaz = get_gazetteer()
    listings = _Listings()
    for f in lianjia_files(path, city, gaz):
        file_city = city_of_file(f, city, gaz)  # before the columns: the error a user sees first
        listings.add_file(f, csv_rows(f), file_city, gaz, limit)
    if not listings.docs:
        raise IngestError(f"no listings in {path}", message=f"导入失败：未找到任何房源：{path}")
    return Corpus(
        documents=listings.docs,
        chunks=listings.chunks,
        kb_defaults={"app": "listings"},
        warnings=listings.warnings,
    )


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
                doc, chunk = listing_document(typed_row(row, file_city, gaz), gaz)
            except ValueError:
                bad += 1
                continue
            if doc.id in self.seen:
                continue
            self.seen.add(doc.id)
            if doc.metadata["district"] is None:
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
