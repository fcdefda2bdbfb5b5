"""Lianjia ingestion and the 板块 → 区 gazetteer."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from zhiwen.apps.listings.ingest import load_lianjia
from zhiwen.chinese.gazetteer import get_gazetteer
from zhiwen.corpora.lianjia import parse_floor, parse_orientation, parse_room
from zhiwen.errors import IngestError

CITY_FILES = {"上海": "sh", "深圳": "sz", "广州": "gz", "杭州": "hz", "成都": "cd"}
HEADER = (
    "area,crawl_time,decoration,elevator,flood,follow_number,house_id,location,look_number,"
    "orientation,pub_duration,room,title,total_price,total_unit,unit_price,xiaoqu"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("中楼层(共6层)1997年建板楼", ("中楼层", 6, 1997, "板楼")),
        ("高楼层(共32层)2014年建板塔结合", ("高楼层", 32, 2014, "板塔结合")),
        ("12层2015年建板楼", (None, 12, 2015, "板楼")),
        ("低楼层(共18层)塔楼", ("低楼层", 18, None, "塔楼")),
        ("下叠(共5层)2008年建板楼", ("下叠", 5, 2008, "板楼")),
        ("高楼层(共11层)2006年建暂无数据", ("高楼层", 11, 2006, None)),
        ("", (None, None, None, None)),
        ("乱七八糟", (None, None, None, None)),
    ],
)
def test_parse_floor(text: str, expected: tuple[Any, ...]) -> None:
    f = parse_floor(text)
    assert (f.level, f.total_floors, f.build_year, f.building_type) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2室1厅", (2, 1, "2室1厅", "普通住宅")),
        ("联排别墅 | 4室2厅", (4, 2, "4室2厅", "联排别墅")),
        ("独栋别墅 | 10室2厅", (10, 2, "10室2厅", "独栋别墅")),
        ("车位", (None, None, "车位", "普通住宅")),
    ],
)
def test_parse_room(text: str, expected: tuple[Any, ...]) -> None:
    assert parse_room(text) == expected


def test_parse_orientation() -> None:
    assert parse_orientation("南 北") == ("南 北", True, True, False)
    assert parse_orientation("东南") == ("东南", False, False, False)
    assert parse_orientation("西北 北") == ("西北 北", False, False, True)


def test_gazetteer_covers_every_location_in_the_csvs(shared_data: Path) -> None:
    gaz = get_gazetteer()
    for city, code in CITY_FILES.items():
        with (shared_data / "lianjia_ershoufang" / f"ErshoufangSpider_{code}.csv").open(
            encoding="utf-8"
        ) as f:
            locations = {row["location"] for row in csv.DictReader(f)}
        missing = sorted(loc for loc in locations if gaz.district_of(city, loc, fuzzy=False) is None)
        assert not missing, f"{city}: {missing}"


def test_gazetteer_aliases_and_fuzzy() -> None:
    gaz = get_gazetteer()
    assert gaz.normalise_district("浦东") == "浦东新区"
    assert gaz.normalise_district("闸北", "上海") == "静安区"
    assert gaz.district_of("上海", "徐家汇") == "徐汇区"
    assert gaz.district_of("上海", "莘庄镇") == "闵行区"  # suffix stripped
    assert gaz.district_of("上海", "陆家咀") == "浦东新区"  # one wrong character (fuzzy)
    assert gaz.district_of("上海", "火星") is None
    assert gaz.city_of("sh") == "上海" and gaz.city_of("上海市") == "上海"
    names = [m.name for m in gaz.find_mentions("想在浦东三林或者徐家汇买房")]
    assert names == ["浦东新区", "三林", "徐家汇"]
    group = gaz.find_mentions("广州珠江新城")[1].resolve({"广州"})
    assert group[0].bankuai == ("珠江新城东", "珠江新城中", "珠江新城西")


def test_load_lianjia_shanghai(sh_corpus: Any) -> None:
    docs = sh_corpus.documents
    assert len(docs) == 2316 and len(sh_corpus.chunks) == 2316
    assert sh_corpus.kb_defaults == {"app": "listings"}
    assert sh_corpus.warnings == []
    d = docs[0]
    assert d.id == "lianjia-sh-5d9942f2d27eef765c53c22bfcb520ec"
    m = d.metadata
    assert m["district"] == "宝山区" and m["bankuai"] == "共富" and m["city"] == "上海"
    assert m["price"] == 280.0 and m["unit_price"] == 39459 and m["area"] == 70.96
    assert (m["rooms"], m["halls"], m["floor_level"], m["total_floors"], m["build_year"]) == (
        2,
        2,
        "中楼层",
        6,
        1997,
    )
    assert m["elevator"] is False and m["decoration"] == "精装" and m["facing_south"] is True
    assert m["near_metro"] is True and m["man_wu"] is True
    assert "共富" in d.text and "宝山区" in d.text and "近地铁" in d.text and "精装" in d.text
    assert sh_corpus.chunks[0].id == d.id and sh_corpus.chunks[0].metadata == m
    assert all(isinstance(x.metadata["price"], float) for x in docs)
    assert all(x.metadata["district"] for x in docs)


def test_load_lianjia_all_cities(shared_data: Path) -> None:
    corpus = load_lianjia(shared_data / "lianjia_ershoufang")
    assert len(corpus.documents) == 2316 + 1923 + 1624 + 1091 + 1008
    assert {d.metadata["city"] for d in corpus.documents} == set(CITY_FILES)
    assert not corpus.warnings


def _write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_unknown_bankuai_is_counted_and_bad_rows_skipped(tmp_path: Path) -> None:
    p = _write_csv(
        tmp_path / "mine.csv",
        [
            "70,t,精装,有电梯,中楼层(共6层)1997年建板楼,1,aaa,火星新区,1,南,x,2室1厅,标题,300,万,40000,某小区",
            "70,t,精装,有电梯,中楼层(共6层)1997年建板楼,1,bbb,七宝,1,南,x,2室1厅,标题,,万,40000,某小区",
        ],
    )
    corpus = load_lianjia(p, city="上海")
    assert len(corpus.documents) == 1
    assert corpus.documents[0].metadata["district"] is None
    assert any("火星新区" in w for w in corpus.warnings)
    assert any("跳过 1 行" in w for w in corpus.warnings)


@pytest.mark.parametrize(
    ("setup", "match"),
    [
        ("missing", "路径不存在"),
        ("no_city", "无法从文件名判断城市"),
        ("bad_city", "不支持的城市"),
        ("bad_columns", "缺少列"),
        ("empty", "未找到任何房源"),
    ],
)
def test_load_lianjia_errors(tmp_path: Path, setup: str, match: str) -> None:
    kwargs: dict[str, Any] = {}
    if setup == "missing":
        path = tmp_path / "nope.csv"
    elif setup == "bad_columns":
        path = tmp_path / "x_sh.csv"
        path.write_text("a,b\n1,2\n", encoding="utf-8")
    elif setup == "empty":
        path = _write_csv(tmp_path / "x_sh.csv", [])
    else:
        path = _write_csv(
            tmp_path / "plain.csv",
            ["70,t,精装,有电梯,中楼层(共6层)1997年建板楼,1,aaa,七宝,1,南,x,2室1厅,标题,300,万,40000,某小区"],
        )
        if setup == "bad_city":
            kwargs["city"] = "火星"
    with pytest.raises(IngestError) as exc:
        load_lianjia(path, **kwargs)
    assert match in exc.value.message


def test_limit_option(shared_data: Path) -> None:
    assert (
        len(load_lianjia(shared_data / "lianjia_ershoufang" / "ErshoufangSpider_hz.csv", limit=10).documents)
        == 10
    )
