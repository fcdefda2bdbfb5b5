"""Pages as real sites write them: several tables a page, a unit row over the header, old and new
科类 names, numbered row labels, years as rows, Chinese-numeral years, aggregate words that are
names (平均分, 收入合计), and rows retrieval missed looked up in the page's other tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiwen.answer.qa import answer_question
from zhiwen.kb import open_kb
from zhiwen.tables.model import table_from_grid
from zhiwen.tables.question import (
    arabic_years,
    column_score,
    header_parts,
    names_other_place,
    row_label,
    value_match,
    year_match,
)

CHROME = (
    "<html><head><meta charset='utf-8'><title>{title}_江城理工大学本科招生网</title></head><body>"
    "<div class='menu'><p><a>网站首页</a> | <a>招生政策</a> | <a>历年分数</a></p></div>"
    "<div class='content'><h3 class='art-title'>{title}</h3>{body}</div>"
    "<div class='foot'><p>版权所有 © 江城理工大学招生与就业处　鄂ICP备05003529号</p></div></body></html>"
)


def _score_page(year: int, province: str, rows: list[tuple[str, int, int, int, int]]) -> str:
    lines = (
        "<p class='title'><strong>一、各科类录取控制线及我校录取最低分</strong></p><table border='1'>"
        "<tr><td>科类</td><td>批次</td><td>省控线</td><td>我校最低分</td></tr>"
        f"<tr><td>物理类</td><td>本科批</td><td>{450 + year % 10}</td><td>520</td></tr>"
        f"<tr><td>历史类</td><td>本科批</td><td>{470 + year % 10}</td><td>530</td></tr></table>"
    )
    body = "".join(
        f"<tr><td>{m}</td><td>{a}</td><td>{b}</td><td>{c}</td><td>{d}</td></tr>" for m, a, b, c, d in rows
    )
    scores = (
        "<p class='title'><strong>二、各专业录取分数</strong></p><table border='1'>"
        "<tr><td colspan='5'>单位：分</td></tr>"
        "<tr><td rowspan='2'>专业</td><td colspan='2'>理工</td><td colspan='2'>文史</td></tr>"
        "<tr><td>最低</td><td>平均</td><td>最低</td><td>平均</td></tr>" + body + "</table>"
    )
    plan = (
        "<p class='title'><strong>招生计划</strong></p><table border='1'>"
        "<tr><th>专业</th><th>计划数（人）</th><th>学费（元/年）</th></tr>"
        + "".join(f"<tr><td>{m}</td><td>{n}</td><td>5,500</td></tr>" for n, (m, *_) in enumerate(rows, 3))
        + "</table>"
    )
    return CHROME.format(title=f"{year}年{province}录取分数统计", body=lines + scores + plan)


def _stats_page() -> str:
    finance = (
        "<p class='title'><strong>学校经费收支情况（单位：万元）</strong></p><table border='1'>"
        "<tr><th>项目</th><th>2022年</th><th>2023年</th></tr>"
        "<tr><td>一、收入合计</td><td>182,345.60</td><td>190,001.25</td></tr>"
        "<tr><td>其中：财政拨款收入</td><td>98,359.25</td><td>99,100.00</td></tr></table>"
    )
    stats = (
        "<p class='title'><strong>历年本科招生情况</strong></p><table border='1'><tr><th>年份</th>"
        "<th>招生人数（人）</th><th>就业率（%）</th></tr><tr><td>2022</td><td>5,344</td><td>91.8</td></tr>"
        "<tr><td>2023</td><td>5,302</td><td>90.7</td></tr></table>"
    )
    return CHROME.format(title="学校基本数据", body=finance + stats)


ROWS = {
    (2022, "河南省"): [
        ("建筑学", 550, 561, 540, 548),
        ("法学", 541, 552, 531, 540),
        ("会计学", 545, 555, 535, 544),
    ],
    (2023, "河南省"): [
        ("建筑学", 552, 563, 542, 549),
        ("法学", 543, 553, 533, 541),
        ("会计学", 530, 551, 536, 545),
    ],
    (2023, "山西省"): [
        ("建筑学", 597, 604, 580, 590),
        ("法学", 584, 590, 570, 580),
        ("会计学", 560, 570, 556, 566),
    ],
}


@pytest.fixture
def kb(zhiwen_home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "hard"
    folder.mkdir()
    for (year, province), rows in ROWS.items():
        (folder / f"score-{year}-{province}.html").write_text(_score_page(year, province, rows), "utf-8")
    (folder / "stats.html").write_text(_stats_page(), "utf-8")
    kb = open_kb("hard", create=True, embedder="hash")
    kb.index_path(folder, fmt="documents", progress=False, dense="skip")
    return kb


@pytest.mark.parametrize(
    ("question", "gold"),
    [
        ("2023年河南省物理类会计学最低分是多少？", "**530**"),  # 理工 is the old name of 物理类
        ("二〇二二年河南省法学历史类最低分", "**531**"),  # a year in Chinese digits
        ("2023年建筑学在河南省录取的物理类平均分是多少", "**563**"),  # 平均分 is a column
        ("2023年学校收入合计是多少万元？", "**190,001.25**"),  # 一、收入合计; 合计 is the row's name
        ("2022年财政拨款收入是多少", "**98,359.25**"),  # 其中：财政拨款收入
        ("2023年招生人数是多少？", "**5,302**"),  # a row keyed by its year
        ("2023年河南省物理类本科批省控线是多少", "**453**"),  # row and column of the batch lines
    ],
)
def test_cells_of_hard_pages(kb, question: str, gold: str) -> None:  # type: ignore[no-untyped-def]
    ans = answer_question(kb, question, llm=None)
    assert ans.route == "table", ans.answer[:200]
    assert gold in ans.answer.split("\n")[0]


def test_an_aggregate_over_a_page_table_no_row_was_retrieved_of(kb) -> None:  # type: ignore[no-untyped-def]
    ans = answer_question(kb, "2023年河南省物理类哪个专业最低分最高？", llm=None)
    assert ans.route == "table" and "**建筑学**" in ans.answer.split("\n")[0]


def test_a_unit_row_over_the_header_goes_to_the_caption() -> None:
    grid = [
        ["单位：分"] * 5,
        ["专业", "理工", "理工", "文史", "文史"],
        ["专业", "最低", "平均", "最低", "平均"],
        ["法学", "541", "552", "531", "540"],
    ]
    t = table_from_grid(grid, caption="二、各专业录取分数")
    assert t is not None and t.caption == "二、各专业录取分数（单位：分）"
    assert t.columns == ["专业", "理工 最低", "理工 平均", "文史 最低", "文史 平均"]


def test_question_words() -> None:
    assert arabic_years("二〇二二年河南省") == "2022年河南省" and arabic_years("二零二一年") == "2021年"
    assert row_label("一、收入合计") == "收入合计" and row_label("其中：财政拨款收入") == "财政拨款收入"
    assert value_match("一、收入合计", "2023年收入合计是多少") > 0
    assert year_match("2022", "2022年招生人数") > 0 and year_match("2022", "2023年招生人数") == 0
    assert header_parts("学费（元/年）") == ["学费"]  # units weigh nothing
    assert column_score("学费（元/年）", "2022年法学最低分") == 0
    assert column_score("理工 最低", "物理类法学最低分") > column_score("文史 最低", "物理类法学最低分")
    assert names_other_place("2023年广东省录取分数统计", "2023年西藏自治区物理类法学最低分")
    assert not names_other_place("2023年河南省录取分数统计", "法学2023年在河南省的最低录取分")
    assert not names_other_place("学校基本数据", "2023年河南省招生人数")


def test_a_province_no_table_names_gets_no_cell(kb) -> None:  # type: ignore[no-untyped-def]
    ans = answer_question(kb, "2023年西藏自治区物理类法学最低分是多少？", llm=None)
    assert ans.route != "table"


def test_the_province_of_a_word_is_no_place() -> None:
    assert not names_other_place("2023年河南省录取分数统计", "2023年河南省物理类本科批省控线是多少")
    assert not names_other_place("2023年河南省录取分数统计", "河南省省会的录取人数")
