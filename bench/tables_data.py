"""The sets of bench/bench_tables.py: table files made here, questions with gold answers.

* **admission site** — HTML pages of a university's admission site: one page per province ×
  year with one table (专业名称 × 文史/历史类, 理工/物理类 × 最高, 最低: a two-level header with
  ``rowspan``/``colspan``), every page under the site-wide ``<title>``, a navigation menu, a
  header and a footer, plus a few news pages without tables;
* **price lists** — an XLSX workbook (a merged title row, two sheets);
* **listings** — ``../shared/data/lianjia_ershoufang/ErshoufangSpider_cd.csv`` as it is;
* **visa table** — ``../shared/data/chinatripinfo_visa_en/…/country_visa_tags.tsv`` as it is.

Scores come from a seeded generator, so the questions' gold answers are computed here.

Example::

    >>> site = make_site(tmp / "site")
    >>> cells, aggregates = site_questions(site)
    >>> cells[0]
    {'q': '2023年四川省物理类金融学类最低分是多少？', 'doc': '2023-sichuan.html', 'gold': '612'}
"""

from __future__ import annotations

import csv
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LISTINGS = SHARED / "lianjia_ershoufang" / "ErshoufangSpider_cd.csv"
VISA = (
    SHARED
    / "chinatripinfo_visa_en"
    / "docs"
    / "source"
    / "_static"
    / "1_1_visa_policy"
    / "country_visa_tags.tsv"
)

SITE = "东湖大学阳光招生信息平台"
PROVINCES = {
    "sichuan": "四川省", "gansu": "甘肃省", "henan": "河南省", "hebei": "河北省", "shandong": "山东省",
    "hubei": "湖北省", "hunan": "湖南省", "yunnan": "云南省", "shaanxi": "陕西省",
    "guangxi": "广西壮族自治区",
}  # fmt: skip
YEARS = (2021, 2022, 2023)
MAJORS = (
    "法学", "金融学类", "经济学类", "工商管理类", "新闻传播学类", "社会学类", "计算机类", "数学类",
    "统计学类", "哲学类", "历史学类", "中国语言文学类", "外国语言文学类", "公共管理类", "国际政治",
    "财政学类", "会计学", "心理学", "环境科学", "信息资源管理", "劳动经济学", "农林经济管理",
)  # fmt: skip
NAV = ["首页", "最新动态", "招生动态", "新闻聚焦", "招生信息", "招生计划", "历年分数", "专业介绍", "联系我们"]


@dataclass(slots=True)
class Page:
    file: str
    province: str
    year: int
    rows: list[tuple[str, int | None, int | None, int | None, int | None]] = field(default_factory=list)


def _scores(rng: random.Random, base: int) -> tuple[int | None, int | None]:
    if rng.random() < 0.12:
        return None, None  # no enrolment in this track
    low = base + rng.randint(-25, 25)
    return low + rng.randint(2, 14), low


def make_site(folder: Path, seed: int = 7) -> list[Page]:
    """The admission site's pages in ``folder`` (see the module docstring)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    pages: list[Page] = []
    for code, province in PROVINCES.items():
        base = rng.randint(560, 640)
        for year in YEARS:
            page = Page(f"{year}-{code}.html", province, year)
            for major in rng.sample(MAJORS, rng.randint(14, len(MAJORS))):
                hi_w, lo_w = _scores(rng, base)
                hi_s, lo_s = _scores(rng, base + 10)
                page.rows.append((major, hi_w, lo_w, hi_s, lo_s))
            (folder / page.file).write_text(_page_html(page), "utf-8")
            pages.append(page)
    for n in range(4):
        (folder / f"news-{n}.html").write_text(_news_html(n), "utf-8")
    return pages


def _chrome(body: str) -> str:
    nav = "".join(f'<li><a href="#">{item}</a></li>' for item in NAV)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{SITE}</title></head><body>"
        f"<div class='header'><div class='logo'>{SITE}</div>"
        "<div class='hotline'>招生咨询电话：010-12345678</div></div>"
        f"<div class='nav'><ul>{nav}</ul></div>"
        f"<div class='main'>{body}</div>"
        "<div class='footer'><p>版权所有 东湖大学招生就业处</p>"
        "<p>地址：东湖市珞珈路1号 邮编：430000</p></div>"
        "</body></html>"
    )


def _cell(v: int | None) -> str:
    return "-" if v is None else str(v)


def _page_html(page: Page) -> str:
    title = f"{page.year}年{page.province}录取分数线"
    head = (
        "<tr><th rowspan='2'>专业名称</th><th colspan='2'>文史/历史类</th>"
        "<th colspan='2'>理工/物理类</th></tr>"
        "<tr><th>最高</th><th>最低</th><th>最高</th><th>最低</th></tr>"
    )
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(c) if i else c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in page.rows
    )
    return _chrome(
        f"<div class='title'><h2>{title}</h2></div>"
        f"<p class='info'>发布时间：{page.year}-08-20　来源：本科招生办</p>"
        f"<table border='1'><thead>{head}</thead><tbody>{body}</tbody></table>"
        "<p>注：“-”表示该科类当年在该省无招生计划。分数为投档成绩。</p>"
    )


def _news_html(n: int) -> str:
    topics = ["东湖大学举行招生咨询会", "强基计划报名启动", "新生入学须知", "校园开放日活动安排"]
    return _chrome(
        f"<h2>{topics[n]}</h2><p>{topics[n]}的详细说明。欢迎考生和家长关注。"
        + "本次活动内容丰富。" * 6
        + "</p>"
    )


_TRACK = {"文史": (1, 2), "历史类": (1, 2), "理工": (3, 4), "物理类": (3, 4)}


def site_questions(pages: list[Page], seed: int = 11) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cell questions (one per page and phrasing) and aggregate questions with gold answers."""
    rng = random.Random(seed)
    cells: list[dict[str, Any]] = []
    templates = [
        "{y}年{p}{t}{m}最低分是多少？",
        "{p}{y}年{m}{t}最高分是多少",
        "{y}年{m}在{p}的{t}最低分？",
        "{p}{y}年{t}{m}专业的最低录取分数是多少？",
    ]
    for page in pages:
        filled = [r for r in page.rows if r[1] is not None and r[3] is not None]
        for template in templates:
            row = rng.choice(filled)
            track = rng.choice(list(_TRACK))
            hi, lo = _TRACK[track]
            gold = row[hi] if "最高" in template else row[lo]
            q = template.format(y=page.year, p=page.province, t=track, m=row[0])
            cells.append({"q": q, "doc": page.file, "gold": str(gold)})
    aggregates: list[dict[str, Any]] = []
    for page in rng.sample(pages, 10):
        lows = [(r[0], r[4]) for r in page.rows if r[4] is not None]
        best = max(v for _, v in lows)
        aggregates.append(
            {"q": f"{page.year}年{page.province}物理类哪个专业最低分最高？", "doc": page.file,
             "gold": [m for m, v in lows if v == best],
             "sql": 'SELECT "专业名称", "理工/物理类 最低" FROM {t} WHERE "理工/物理类 最低" = '
                    '(SELECT MAX("理工/物理类 最低") FROM {t})'}
        )  # fmt: skip
        aggregates.append(
            {"q": f"{page.year}年{page.province}理工类最低分的平均分是多少？", "doc": page.file,
             "gold": [f"{statistics.mean(v for _, v in lows):.2f}".rstrip("0").rstrip(".")],
             "sql": 'SELECT ROUND(AVG("理工/物理类 最低"), 2) FROM {t}'}
        )  # fmt: skip
        aggregates.append(
            {
                "q": f"{page.year}年{page.province}一共招了几个专业？",
                "doc": page.file,
                "gold": [str(len(page.rows))],
                "sql": "SELECT COUNT(*) FROM {t}",
            }
        )
    by_key = {(p.province, p.year): p for p in pages}
    for code, province in list(PROVINCES.items())[:5]:
        common = set.intersection(
            *({r[0] for r in by_key[(province, y)].rows if r[4] is not None} for y in YEARS)
        )
        major = sorted(common)[0]
        values = [next(r[4] for r in by_key[(province, y)].rows if r[0] == major) for y in YEARS]
        aggregates.append(
            {"q": f"2021到2023年{province}{major}物理类最低分的变化", "doc": f"2021-{code}.html",
             "gold": [str(v) for v in values]}
        )  # fmt: skip
    return cells, aggregates


def absent_questions(pages: list[Page]) -> list[dict[str, Any]]:
    """Cell questions about a major a page does not list (other pages do): no cell is right."""
    out = []
    for page in pages:
        missing = sorted(set(MAJORS) - {r[0] for r in page.rows})
        if missing:
            out.append(
                {"q": f"{page.year}年{page.province}物理类{missing[0]}最低分是多少？", "doc": page.file}
            )
    return out


# -- price lists ---------------------------------------------------------------------------------
BRANDS = {
    "手机": ["华为", "小米", "苹果", "荣耀", "OPPO", "vivo"],
    "笔记本": ["联想", "华为", "戴尔", "苹果", "惠普"],
}


def make_prices(folder: Path, seed: int = 3) -> dict[str, list[list[Any]]]:
    """``价格表.xlsx`` (two sheets under a merged title row) in ``folder``; returns its rows."""
    import openpyxl

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    sheets: dict[str, list[list[Any]]] = {}
    for sheet, brands in BRANDS.items():
        ws = wb.create_sheet(sheet)
        ws.append([f"2024年{sheet}价格表"])
        ws.merge_cells(start_row=1, start_column=1, end_row=1, end_column=5)
        ws.append(["型号", "品牌", "内存(GB)", "单价(元)", "上市日期"])
        rows = []
        for n in range(40):
            brand = rng.choice(brands)
            model = f"{brand}{sheet[0]}{rng.choice('XSPM')}{100 + n}"
            row = [
                model,
                brand,
                rng.choice([8, 12, 16, 32]),
                rng.randrange(1500, 15000, 100),
                f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            ]
            ws.append(row)
            rows.append(row)
        sheets[sheet] = rows
    wb.save(str(folder / "价格表.xlsx"))
    return sheets


def price_questions(sheets: dict[str, list[list[Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(5)
    cells = []
    for sheet, rows in sheets.items():
        for row in rng.sample(rows, 8):
            cells.append({"q": f"{row[0]}的单价是多少？", "doc": "价格表.xlsx", "gold": str(row[3])})
            cells.append({"q": f"{sheet}{row[0]}什么时候上市？", "doc": "价格表.xlsx", "gold": str(row[4])})
    aggs = []
    for sheet, rows in sheets.items():
        priciest = max(r[3] for r in rows)
        aggs.append(
            {
                "q": f"最贵的{sheet}是哪款？",
                "doc": "价格表.xlsx",
                "sheet": sheet,
                "gold": [r[0] for r in rows if r[3] == priciest],
                "sql": 'SELECT "型号", "单价(元)" FROM {t} ORDER BY "单价(元)" DESC LIMIT 1',
            }
        )
        aggs.append(
            {
                "q": f"单价低于5000元的{sheet}有几款？",
                "doc": "价格表.xlsx",
                "sheet": sheet,
                "gold": [str(sum(1 for r in rows if r[3] < 5000))],
                "sql": 'SELECT COUNT(*) FROM {t} WHERE "单价(元)" < 5000',
            }
        )
        brand = BRANDS[sheet][0]
        mine = [r[3] for r in rows if r[1] == brand]
        aggs.append(
            {
                "q": f"{brand}{sheet}的平均单价是多少？",
                "doc": "价格表.xlsx",
                "sheet": sheet,
                "gold": [f"{statistics.mean(mine):.2f}".rstrip("0").rstrip(".")],
                "sql": f'SELECT ROUND(AVG("单价(元)"), 2) FROM {{t}} WHERE "品牌" = \'{brand}\'',
            }
        )
    return cells, aggs


# -- the shared data sets ----------------------------------------------------------------------------
def listings_questions() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with LISTINGS.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    rng = random.Random(9)
    doc = LISTINGS.name
    estates: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        estates.setdefault(r["xiaoqu"].strip(), []).append(r)
    single = [rs[0] for e, rs in estates.items() if len(rs) == 1 and len(e) >= 3]
    cells = [
        {"q": f"{r['xiaoqu'].strip()}的房子单价是多少？", "doc": doc, "gold": r["unit_price"]}
        for r in rng.sample(single, 12)
    ]
    count_lt = sum(1 for r in rows if float(r["unit_price"]) < 15000)
    fine = [float(r["total_price"]) for r in rows if r["decoration"] == "精装"]
    aggs = [
        {
            "q": "单价低于15000的房源有几套？",
            "doc": doc,
            "gold": [str(count_lt)],
            "sql": 'SELECT COUNT(*) FROM {t} WHERE "unit_price" < 15000',
        },
        {
            "q": "精装的房源平均总价是多少？",
            "doc": doc,
            "gold": [f"{statistics.mean(fine):.2f}".rstrip("0").rstrip(".")],
            "sql": 'SELECT ROUND(AVG("total_price"), 2) FROM {t} WHERE "decoration" = \'精装\'',
        },
        {
            "q": "面积最大的是哪个小区？",
            "doc": doc,
            "gold": [max(rows, key=lambda r: float(r["area"]))["xiaoqu"].strip()],
            "sql": 'SELECT "xiaoqu", "area" FROM {t} ORDER BY "area" DESC LIMIT 1',
        },
    ]
    return cells, aggs


def visa_questions() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with VISA.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    rng = random.Random(4)
    doc = VISA.name
    cells = [
        {"q": f"{r['Country']}免签天数是多少？", "doc": doc, "gold": r["Visa-Free Days"]}
        for r in rng.sample(rows, 10)
    ]
    europe = sum(1 for r in rows if r["Continent"] == "Europe")
    aggs = [
        {
            "q": "Europe有几个国家？",
            "doc": doc,
            "gold": [str(europe)],
            "sql": "SELECT COUNT(*) FROM {t} WHERE \"Continent\" = 'Europe'",
        }
    ]
    return cells, aggs
