"""Gazetteer, visa table, statute parsing, KB mapping and corpus building (no KB involved)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from policy_fixtures import SHARED_DATA, VISA_DIR

from zhiwen.apps.policy.corpus import build_corpus
from zhiwen.apps.policy.countries import Gazetteer, default_gazetteer, normalise_name
from zhiwen.apps.policy.kbconfig import load_kb_config, parse_kb_config
from zhiwen.apps.policy.statutes import ArticleSelector, select_articles
from zhiwen.apps.policy.visa_table import load_visa_table, parse_end_date, parse_tag, policy_file_for
from zhiwen.corpora.statutes import parse_statute
from zhiwen.errors import IngestError, InvalidParameter

GAZ = default_gazetteer()


# -- gazetteer -----------------------------------------------------------------------------
def test_gazetteer_covers_the_un_and_names_are_unambiguous() -> None:
    assert len(GAZ) >= 194  # 192 UN members (China is the host) + 2 observer states
    seen: dict[str, str] = {}
    for c in GAZ:
        assert c.zh and c.en and len(c.iso2) == 2 and len(c.iso3) == 3
        for name in c.names:
            key = normalise_name(name)
            assert seen.setdefault(key, c.iso2) == c.iso2, f"{name!r} names two countries"
    assert GAZ.lookup("CN") is None and GAZ.find("中国公民") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("美国", ["US"]),
        ("美利坚合众国", ["US"]),
        ("USA and the United States", ["US"]),
        ("US citizens", ["US"]),
        ("tell us about it", []),  # "us" is not the USA
        ("塞尔维亚", ["RS"]),
        ("Serbia", ["RS"]),
        ("SERBIA", ["RS"]),
        ("韩国和朝鲜", ["KR", "KP"]),
        ("South Korea", ["KR"]),
        ("North Korea", ["KP"]),
        ("印度尼西亚和印度", ["ID", "IN"]),
        ("几内亚比绍、赤道几内亚、几内亚", ["GW", "GQ", "GN"]),
        ("Dominica or the Dominican Republic", ["DM", "DO"]),
        ("Niger, Nigeria", ["NE", "NG"]),
        ("南苏丹和苏丹", ["SS", "SD"]),
        ("上海地区口岸", []),  # not Haiti
        ("内蒙古口岸", []),  # not Mongolia
        ("Holland", ["NL"]),
        ("阿联酋 UAE", ["AE"]),
        ("Türkiye / Turkey", ["TR"]),
    ],
)
def test_find(text: str, expected: list[str]) -> None:
    assert [c.iso2 for c in GAZ.find(text)] == expected


def test_mentions_carry_positions() -> None:
    (m,) = GAZ.mentions("关于塞尔维亚的机组")
    assert (m.text, m.start, m.end, m.country.en) == ("塞尔维亚", 2, 6, "Serbia")


@given(st.text(max_size=60))
def test_find_never_fails(text: str) -> None:
    for c in GAZ.find(text):
        assert c in GAZ.countries


def test_custom_gazetteer() -> None:
    from zhiwen.apps.policy.countries import Country

    gaz = Gazetteer([Country("XA", "XAA", "Atlantis", "亚特兰蒂斯", ("Atlantica",))])
    assert gaz.find("去亚特兰蒂斯和atlantica") == [gaz.countries[0]]


# -- visa table ------------------------------------------------------------------------------
def test_tags_and_dates() -> None:
    tag = parse_tag("Mutual-30-Limit-180")
    assert tag is not None and (tag.type, tag.days, tag.qualifier) == ("mutual", 30, "Limit-180")
    assert "90天" in tag.label_zh
    assert parse_tag("Nonsense") is None
    assert parse_end_date("2025-12-31") == date(2025, 12, 31)
    assert parse_end_date("Endless") is None and parse_end_date("N/A") is None
    assert policy_file_for(["Mutual-30", "Regional-30"], None) == "mutual_30::regional_30.md"
    assert policy_file_for([], None) == "others.md"


def test_mini_table(mini_data: Path) -> None:
    base = mini_data / VISA_DIR
    table = load_visa_table(base / "country_visa_tags.tsv", GAZ, base / "policies")
    assert len(table) == 6 and table.unknown == []
    rs, fr, us = table.get("RS"), table.get("FR"), table.get("US")
    assert rs is not None and fr is not None and us is not None
    assert (rs.days, rs.primary_type, rs.end_date, rs.nationwide) == (30, "mutual", None, True)
    assert (fr.primary_type, fr.end_date) == ("unilateral", date(2025, 12, 31))
    assert fr.expired(date(2026, 1, 1)) and not fr.expired(date(2025, 12, 31))
    assert (us.primary_type, us.nationwide) == ("regional", False)
    # Thailand's exact page is missing: the first tag's page stands in (the site shows an error)
    assert table.get("TH").policy_file == "mutual_30_limit_180.md"  # type: ignore[union-attr]
    doc = table.get("KR").to_document()  # type: ignore[union-attr]
    assert doc.id == "country/KR" and "韩国" in doc.text and "South Korea" in doc.text
    assert doc.metadata["end_date"] == "2025-12-31"


def test_missing_table_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        load_visa_table(tmp_path / "none.tsv", GAZ)


def test_real_table_every_country_known() -> None:
    tsv = SHARED_DATA / VISA_DIR / "country_visa_tags.tsv"
    if not tsv.is_file():
        pytest.skip("shared data absent")
    table = load_visa_table(tsv, GAZ, tsv.parent / "policies")
    assert len(table) == 81 and table.unknown == []
    assert table.get("SM").days == 90  # type: ignore[union-attr]  # Mutual-90, though the column says 30
    assert table.get("MU").days == 60  # type: ignore[union-attr]
    assert sum(1 for e in table if e.end_date == date(2025, 12, 31)) > 30
    assert all(e.policy_file for e in table)


# -- statutes --------------------------------------------------------------------------------
def test_parse_statute(mini_data: Path) -> None:
    s = parse_statute(mini_data / "cn_law_subset" / "出境入境管理法(2012-06-30).md")
    assert (s.id, s.title, s.date) == ("出境入境管理法", "中华人民共和国出境入境管理法", "2012-06-30")
    labels = [a.label for a in s.articles]
    assert labels == ["第二十二条", "第二十三条", "第六十七条"]
    art = s.articles[0]
    assert (art.number, art.chapter, art.section) == (22, "第三章 外国人入境出境", "第一节 签证")
    assert "二十四小时" in art.text and s.articles[2].section == ""
    assert [a.label for a in select_articles(s, ArticleSelector(keywords=("船员",)))] == ["第二十三条"]
    assert [a.label for a in select_articles(s, ArticleSelector(chapters=("第六章",)))] == ["第六十七条"]
    assert len(select_articles(s, ArticleSelector(all_articles=True))) == 3
    assert select_articles(s, ArticleSelector()) == []


# -- KB mapping and corpus -------------------------------------------------------------------
def test_shipped_mapping() -> None:
    cfg = load_kb_config()
    assert set(cfg.kbs) == {"visa", "airline", "general"}
    assert cfg.kb_names("visa_free") == ["policy_visa"]
    assert cfg.kb_names("airline_visa_free") == ["policy_airline", "policy_visa"]
    assert cfg.kb_names("other") == []
    renamed = cfg.with_names({"visa": "my_visa", "airline": None})
    assert renamed.kb_names("both") == ["my_visa", "policy_airline"]


@pytest.mark.parametrize(
    "text",
    [
        "not toml [",
        "[kbs.visa]\nname = 'v'\n",  # routing names roles that do not exist
        "[kbs.visa]\nname='bad name!'\n[kbs.airline]\nname='a'\n[kbs.general]\nname='g'\n",
        "[kbs.visa]\nname='v'\n[[kbs.visa.sources]]\nkind='pdf'\npath='x'\n"
        "[kbs.airline]\nname='a'\n[kbs.general]\nname='g'\n",
    ],
)
def test_bad_mapping(text: str) -> None:
    with pytest.raises(InvalidParameter):
        parse_kb_config(text)


def test_custom_mapping_file(tmp_path: Path) -> None:
    path = tmp_path / "kbs.toml"
    path.write_text(
        "[routing]\nvisa_free=['v']\nairline_visa_free=['v']\nboth=['v']\ngeneral='g'\n"
        "[kbs.v]\nname='my_visa'\n[kbs.g]\nname='my_laws'\n"
        "[[kbs.g.sources]]\nkind='markdown'\npath='docs/*.md'\n",
        encoding="utf-8",
    )
    cfg = load_kb_config(path)
    assert cfg.kb_names("both") == ["my_visa"] and cfg.general_kb().name == "my_laws"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# 标题\n\n## 一节\n内容", encoding="utf-8")
    corpus = build_corpus(cfg.kbs["g"], tmp_path)
    assert [d.id for d in corpus.documents] == ["docs/a"] and corpus.chunks
    with pytest.raises(InvalidParameter):
        load_kb_config(tmp_path / "missing.toml")


def test_build_corpus_from_mini_data(mini_data: Path) -> None:
    cfg = load_kb_config()
    visa = build_corpus(cfg.kbs["visa"], mini_data, role="visa")
    ids = {d.id for d in visa.documents}
    assert {"country/RS", "country/FR", "country/US"} <= ids
    assert {d.id for d in visa.documents if d.id.startswith("policy/")} == {
        "policy/mutual_30_limit_180",
        "policy/unilateral_30_2025_12+regional_30+transit_10",
        "policy/regional_30+transit_10",
    }
    fr = next(d for d in visa.documents if d.id == "country/FR")
    assert fr.metadata["policy_doc"] == "policy/unilateral_30_2025_12+regional_30+transit_10"
    airline = build_corpus(cfg.kbs["airline"], mini_data, role="airline")
    chunk_ids = {c.id for c in airline.chunks}
    assert "外国人入境出境管理条例#第六条" in chunk_ids  # C visa for aircrew
    assert "出境入境管理法#第二十二条" in chunk_ids and "出境入境管理法#第六十七条" not in chunk_ids
    assert not any(c.id.startswith("契税法") for c in airline.chunks)
    general = build_corpus(cfg.kbs["general"], mini_data, role="general")
    assert len(general.documents) == len(list((mini_data / "cn_law_subset").glob("*.md")))
    tax = next(c for c in general.chunks if c.id == "契税法#第三条")
    assert tax.title == "契税法 第三条" and tax.parent_id == "契税法" and "百分之三" in tax.text


def test_build_corpus_missing_source(tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        build_corpus(load_kb_config().kbs["general"], tmp_path)
