"""Market tables against the CSVs read independently, and policy search's city filter (Property 8)."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zhiwen.appkit.app import AppContext
from zhiwen.apps.advisor.kb import faq_documents, rule_documents, statute_documents
from zhiwen.apps.advisor.market import DATA_NOTE, MarketData, market_path
from zhiwen.apps.advisor.tools import build_registry
from zhiwen.chinese.gazetteer import get_gazetteer
from zhiwen.chinese.places import find_districts
from zhiwen.errors import ToolValidationError


def csv_unit_prices(shared: Path, code: str, district: str) -> list[float]:
    """Unit prices of a district, read straight from the CSV with the gazetteer's 板块."""
    gaz = get_gazetteer()
    city = gaz.city_of_code(code)
    assert city is not None
    bankuai = set(gaz.bankuai(city, district))
    path = shared / "lianjia_ershoufang" / f"ErshoufangSpider_{code}.csv"
    with path.open(encoding="utf-8") as fh:
        return [float(r["unit_price"]) for r in csv.DictReader(fh) if r["location"].strip() in bankuai]


def test_compare_districts_matches_the_csv(market: MarketData, shared: Path) -> None:
    r = market.compare("上海", ["浦东", "闵行"])
    assert [d["district"] for d in r["districts"]] == ["浦东", "闵行"]  # named as asked
    for asked, canonical in (("浦东", "浦东新区"), ("闵行", "闵行区")):
        prices = csv_unit_prices(shared, "sh", canonical)
        got = next(d for d in r["districts"] if d["district"] == asked)
        assert got["count"] == len(prices)
        assert got["avg_unit_price"] == round(statistics.fmean(prices))
        assert got["median_unit_price"] == round(statistics.median(prices))
    assert r["highest"] == "浦东" and r["data_note"] == DATA_NOTE


def test_queries_by_group_and_trend_is_not_a_time_series(market: MarketData) -> None:
    by_bankuai = market.query("上海市", district="闵行", group_by="bankuai")
    assert by_bankuai["overall"]["count"] == sum(g["count"] for g in by_bankuai["groups"])
    assert "莘庄" in [g["name"] for g in by_bankuai["groups"]]
    by_rooms = market.query("sh", group_by="rooms", rooms=2)
    assert [g["name"] for g in by_rooms["groups"]] == ["2室"]
    trend = market.trend("深圳", district="南山")
    assert trend["by_build_year"] and "不能反映价格随时间的涨跌" in trend["data_note"]
    assert "2019年6月" in trend["data_note"]


def test_unknown_city_or_district_is_a_2001(market: MarketData) -> None:
    with pytest.raises(ToolValidationError, match="南宁"):
        market.compare("南宁", ["青秀"])
    with pytest.raises(ToolValidationError, match="火星区"):
        market.compare("上海", ["浦东", "火星区"])


def test_market_tables_round_trip(market: MarketData, tmp_path: Path) -> None:
    path = market_path(tmp_path)
    market.save(path)
    again = MarketData.load(path)
    assert again.compare("广州", ["天河", "番禺"]) == market.compare("广州", ["天河", "番禺"])


def test_place_names() -> None:
    assert [(m.surface, m.district) for m in find_districts("浦东和闵行哪个房价高")] == [
        ("浦东", "浦东新区"),
        ("闵行", "闵行区"),
    ]
    assert find_districts("黄埔和天河")[0].city == "广州"  # settled by the unambiguous 天河


def test_kb_documents_are_well_formed(shared: Path) -> None:
    docs, chunks = statute_documents(shared / "cn_law_subset", ["契税法", "上海市住房公积金管理若干规定"])
    assert {d.metadata["city"] for d in docs} == {"全国", "上海"}
    third = next(c for c in chunks if c.id == "law/契税法#第三条")
    assert "百分之三至百分之五" in third.text and third.metadata["article"] == "第三条"
    faq_docs, faq_chunks = faq_documents()
    assert 25 <= len(faq_docs) <= 40 and len(faq_chunks) == len(faq_docs)
    assert all(d.title.endswith("？") for d in faq_docs)
    rule_docs, _ = rule_documents()
    assert any("2024年第16号" in d.text for d in rule_docs)


CITIES = ["上海", "北京", "深圳", "南宁"]
QUERIES = ["住房公积金贷款", "契税税率", "个人所得税 财产转让", "提取住房公积金", "增值税 免征", "缴存比例"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(QUERIES), st.sampled_from(CITIES), st.booleans())
def test_property8_policy_search_city_filter(
    advisor_ctx: AppContext, query: str, city: str, national: bool
) -> None:
    registry = build_registry(advisor_ctx)
    r: dict[str, Any] = registry.call(
        "search_policy", {"query": query, "city": city, "top_k": 5, "include_national": national}
    )
    allowed = {city, "全国"} if national else {city}
    assert all(hit["city"] in allowed for hit in r["hits"]), r["hits"]
    if city == "上海" and "公积金" in query and not national:
        assert r["hits"]  # the Shanghai regulation is there and nothing else


def test_faq_search_finds_the_question(advisor_ctx: AppContext) -> None:
    r = build_registry(advisor_ctx).call("search_faq", {"query": "等额本息和等额本金怎么选", "top_k": 3})
    assert r["hits"][0]["title"] == "等额本息和等额本金怎么选？"
