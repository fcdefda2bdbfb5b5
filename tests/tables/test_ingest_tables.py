"""Tables out of every format, the site's title and chrome left out, and bad input bounded."""

from __future__ import annotations

import contextlib
import csv
from pathlib import Path

import pytest
from table_fixtures import SITE_TITLE

from zhiwen.config import Settings
from zhiwen.ingest.files import file_documents, load_files
from zhiwen.ingest.limits import IngestLimits
from zhiwen.ingest.model import ParsedFile


def settings(tmp_path: Path, **tables: int) -> Settings:
    return Settings(home=tmp_path / "home", embedding={"provider": "hash"}, tables=tables)


def parsed(tmp_path: Path, path: Path, **tables: int) -> ParsedFile:
    [result] = load_files(path, settings=settings(tmp_path, **tables))
    assert result.status == "ok", result.error
    assert result.parsed is not None
    return result.parsed


def test_site_pages_keep_their_own_title_and_drop_the_menu(tmp_path: Path, site: Path) -> None:
    results = load_files(site, settings=settings(tmp_path))
    docs, chunks = file_documents(results, max_chars=800, overlap=80)
    titles = {d.id: d.title for d in docs}
    assert titles["2021-四川省.html"] == "2021年四川省录取分数线"
    assert SITE_TITLE not in titles.values()
    assert not any("最新动态" in c.text or "版权所有" in c.text for c in chunks)
    rows = [c for c in chunks if c.doc_id == "2021-四川省.html" and "table" in c.metadata]
    assert len(rows) == 3
    assert rows[1].text == (
        "2021年四川省录取分数线\n\n专业名称：金融学类；文史/历史类 最高：630；文史/历史类 最低：618；"
        "理工/物理类 最高：620；理工/物理类 最低：612"
    )
    meta = rows[1].metadata
    assert meta["row"] == 2 and meta["cells"] == [["金融学类", "630", "618", "620", "612"]]
    assert meta["columns"][4] == "理工/物理类 最低" and meta["types"][4] == "int"
    assert docs[0].metadata["tables"] == 1


def test_xlsx_title_row_merged_header_and_formulas(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "手机"
    ws.append(["2024年手机价格表"])
    ws.merge_cells("A1:D1")
    ws.append(["型号", "价格", None, "备注"])
    ws.merge_cells("B2:C2")
    ws.append([None, "单价", "折后", None])
    ws.append(["X1", 3999, "=B4*0.9", "新品"])
    ws.append(["X2", 4999, 4499, None])
    folder = tmp_path / "xlsx"
    folder.mkdir()
    wb.save(str(folder / "价格.xlsx"))
    p = parsed(tmp_path, folder)
    [place] = p.tables
    t = place.table
    assert t.caption == "2024年手机价格表" and t.sheet == "手机"
    assert t.columns == ["型号", "价格 单价", "价格 折后", "备注"]
    assert t.rows[0][2] == ""  # a formula without a cached value is an empty cell, not an error


def test_csv_in_gbk_and_tsv_are_tables(tmp_path: Path) -> None:
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "名单.csv").write_bytes("姓名,部门,工号\n张三,研发部,001\n李四,市场部,002\n".encode("gbk"))
    (folder / "visa.tsv").write_text("Country\tDays\nAlbania\t30\nArmenia\t90\n", "utf-8")
    results = {r.source: r for r in load_files(folder, settings=settings(tmp_path))}
    assert results["名单.csv"].parsed and results["名单.csv"].parsed.tables[0].table.rows[0] == [
        "张三",
        "研发部",
        "001",
    ]
    assert results["visa.tsv"].parsed and results["visa.tsv"].parsed.tables[0].table.types == ["text", "int"]


def test_markdown_and_docx_tables(tmp_path: Path) -> None:
    import docx

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "费用.md").write_text(
        "# 收费标准\n\n## 住宿费\n\n| 房型 | 费用 |\n|---|---|\n"
        "| 四人间 | 1200 |\n| 双人间 | 1800 |\n\n说明文字。\n",
        "utf-8",
    )
    document = docx.Document()
    document.add_heading("考勤制度", 1)
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate([["假别", "天数", "天数"], ["", "最少", "最多"], ["年假", "5", "15"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(0, 1).merge(table.cell(0, 2)).text = "天数"  # a merged cell: one text over two columns
    document.save(str(folder / "制度.docx"))
    results = {r.source: r for r in load_files(folder, settings=settings(tmp_path))}
    _, chunks = file_documents(list(results.values()), max_chars=800, overlap=80)
    md_rows = [c for c in chunks if c.doc_id == "费用" and "table" in c.metadata]
    assert [c.metadata["cells"] for c in md_rows] == [[["四人间", "1200"]], [["双人间", "1800"]]]
    assert (
        md_rows[0].text.startswith("收费标准 · 住宿费\n\n房型：四人间")
        and md_rows[0].metadata["section"] == "收费标准 > 住宿费"
    )
    assert any(c.doc_id == "费用" and "说明文字" in c.text for c in chunks)
    t = results["制度.docx"].parsed.tables[0].table  # type: ignore[union-attr]
    assert t.columns == ["假别", "天数 最少", "天数 最多"] and t.rows == [["年假", "5", "15"]]


# -- bad input: imported within the budget or refused in Chinese; never an error, never a hang --
def test_a_million_row_csv_is_cut_to_the_row_limit_with_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    with (folder / "明细.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["编号", "数量"])
        w.writerows([f"N{i}", i % 97] for i in range(1_000_000))
    p = parsed(tmp_path, folder, max_rows=50_000)
    assert len(p.tables[0].table.rows) == 50_000
    assert any("其余行未导入" in w for w in p.warnings)


def test_a_sheet_past_the_row_limit_is_cut(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("明细")
    ws.append(["编号", "数量"])
    for i in range(3000):
        ws.append([f"N{i}", i])
    folder = tmp_path / "x"
    folder.mkdir()
    wb.save(str(folder / "大表.xlsx"))
    p = parsed(tmp_path, folder, max_rows=1000)
    assert len(p.tables[0].table.rows) == 1000 and any("其余行未导入" in w for w in p.warnings)


def test_two_thousand_columns_are_imported_in_column_groups(tmp_path: Path) -> None:
    folder = tmp_path / "wide"
    folder.mkdir()
    with (folder / "宽表.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["名称", *[f"指标{i}" for i in range(2000)]])
        w.writerows([f"对象{r}", *[str(r * i % 1000) for i in range(2000)]] for r in range(20))
    results = load_files(folder, settings=settings(tmp_path))
    _, chunks = file_documents(results, max_chars=800, overlap=80)
    assert len(chunks) > 20 * 20 and all(len(c.text) <= 800 for c in chunks)
    assert all("名称：对象" in c.text for c in chunks)


def test_merged_cell_chaos_and_empty_headers_do_not_fail(tmp_path: Path) -> None:
    import random

    import openpyxl

    rng = random.Random(1)
    wb = openpyxl.Workbook()
    ws = wb.active
    for _ in range(1, 40):
        ws.append([rng.choice([None, "", "甲", 1, 2.5, "2024-01-01"]) for _ in range(12)])
    for _ in range(25):
        r, c = rng.randint(1, 38), rng.randint(1, 10)
        with contextlib.suppress(ValueError):
            ws.merge_cells(
                start_row=r, start_column=c, end_row=r + rng.randint(0, 2), end_column=c + rng.randint(0, 2)
            )
    folder = tmp_path / "chaos"
    folder.mkdir()
    wb.save(str(folder / "乱.xlsx"))
    [result] = load_files(folder, settings=settings(tmp_path))
    assert result.status in ("ok", "failed")
    if result.status == "failed":
        assert result.error and "「乱.xlsx」" in result.error
    else:
        file_documents([result], max_chars=800, overlap=80)


def test_html_tables_with_absurd_spans_stay_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "spans"
    folder.mkdir()
    cells = "".join(f"<td rowspan='999999' colspan='{n}'>x</td>" for n in (1, 99999, "abc"))
    (folder / "坏表.html").write_text(
        f"<html><body><h1>坏表</h1><table><tr><th>a</th><th>b</th></tr><tr>{cells}</tr></table></body></html>",
        "utf-8",
    )
    limits = IngestLimits(max_table_cells=10_000)
    from zhiwen.ingest.textfiles import load_html_file

    p = load_html_file(folder / "坏表.html", "坏表.html", limits)
    assert p.title == "坏表"


def test_an_html_page_in_gb18030_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "gb"
    folder.mkdir()
    html = (
        "<html><head><meta charset='gb18030'><title>站点</title></head><body><h1>收费表</h1>"
        "<table><tr><th>项目</th><th>金额</th></tr><tr><td>学费</td><td>5000</td></tr></table></body></html>"
    )
    (folder / "收费.html").write_bytes(html.encode("gb18030"))
    p = parsed(tmp_path, folder)
    assert p.title == "收费表" and p.tables[0].table.rows == [["学费", "5000"]]


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00", "只有一列\n甲\n乙\n".encode()])
def test_degenerate_csv_is_refused_or_read(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / "deg"
    folder.mkdir()
    (folder / "坏.csv").write_bytes(content)
    [result] = load_files(folder, settings=settings(tmp_path))
    assert result.status in ("ok", "failed")
    if result.status == "failed":
        assert result.error and "坏.csv" in result.error


def test_pptx_tables_are_tables_on_their_slide(tmp_path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "季度销售额"
    shape = slide.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, row in enumerate([["季度", "销售额"], ["一季度", "120"], ["二季度", "135"]]):
        for c, text in enumerate(row):
            shape.table.cell(r, c).text = text
    folder = tmp_path / "ppt"
    folder.mkdir()
    prs.save(str(folder / "汇报.pptx"))
    results = load_files(folder, settings=settings(tmp_path))
    _, chunks = file_documents(results, max_chars=800, overlap=80)
    rows = [c for c in chunks if "table" in c.metadata]
    assert [c.metadata["cells"] for c in rows] == [[["一季度", "120"]], [["二季度", "135"]]]
    assert rows[0].metadata["page"] == 1 and rows[0].text.startswith("汇报 · 季度销售额\n\n季度：一季度")


def test_chrome_the_extractor_kept_on_some_pages_only_is_dropped_as_a_block() -> None:
    from zhiwen.ingest.site import drop_repeated_lines

    menu = "网站首页 | 招生政策 | 历年分数\n\n相关链接\n\n教育部阳光高考平台\n\n研究生招生网"
    pages = [
        ParsedFile(f"news-{n}.html", "html", blocks=[(None, f"{menu}\n\n新闻{n}的正文。")]) for n in range(3)
    ]
    pages += [
        ParsedFile(f"score-{n}.html", "html", blocks=[(None, f"{n}年分数\n\n二、各专业录取分数")])
        for n in range(4)
    ]
    drop_repeated_lines(pages)  # the menu is on 3 of 7 pages: under the share, but a block
    assert [p.blocks[0][1].strip() for p in pages[:2]] == ["新闻0的正文。", "新闻1的正文。"]
    assert "二、各专业录取分数" in pages[3].blocks[0][1]  # a heading on 4 of 7 pages, alone: kept
