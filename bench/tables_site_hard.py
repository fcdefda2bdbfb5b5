"""A harder table site for bench/bench_tables.py: pages as a real admissions site writes them.

What makes it harder than ``tables_data.make_site`` (one clean table per page):

* **chrome trafilatura keeps** — a breadcrumb (「当前位置：首页 > 招生信息 > …」), a menu written as
  paragraphs of links, a 「相关链接」 side list, a footer with the ICP number and a visit counter
  that differs per page; the ``<title>`` is 「<page> _ <site>」 on some pages, the site alone on
  others, and the page's own name is in an ``<h3 class="art-title">`` (not an ``<h1>``);
* **several tables per page** — the batch lines (科类 × 批次: 省控线, 最低分, 线差), the majors'
  scores, the plan (计划数, 学制, 学费 with thousands separators);
* **three ways of writing the majors' scores** (by province): one table with a two-level
  header 物理类/历史类 × 最高分/最低分/平均分 and a 学院 column merged down (``rowspan``); two
  tables, one per 科类, each under its own caption; the old 理工/文史 naming with the header's
  first row a title cell spanning the table (「单位：分」);
* **statistics pages** — years as columns (收支 in 万元, 「12,345.67」, rows 「一、」 「其中：」),
  years as rows (招生人数, 就业率（%）), footnotes under each table;
* **questions** written many ways: a row and a column (「物理类本科批省控线」), years in Chinese
  numerals (「二〇二二年」), a major with 专业 or without, comparisons and aggregates, and
  questions no table answers (a major a page lacks, a year the site lacks, no table at all).

Scores come from a seeded generator; gold answers are computed here.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SITE = "江城理工大学本科招生网"
PROVINCES = {
    "sichuan": "四川省", "henan": "河南省", "hebei": "河北省", "hunan": "湖南省",
    "guangdong": "广东省", "jiangxi": "江西省", "shanxi": "山西省", "anhui": "安徽省",
}  # fmt: skip
#: how a province's pages write the majors' scores
STYLE = {
    "sichuan": "grouped", "henan": "old", "hebei": "split", "hunan": "split",
    "guangdong": "grouped", "jiangxi": "old", "shanxi": "grouped", "anhui": "split",
}  # fmt: skip
YEARS = (2021, 2022, 2023)
CN_YEARS = {2021: "二〇二一", 2022: "二〇二二", 2023: "二〇二三"}
SCHOOLS = {
    "机械工程学院": ("机械工程", "车辆工程", "工业设计"),
    "电气与信息学院": ("电气工程及其自动化", "计算机科学与技术", "软件工程", "通信工程"),
    "土木建筑学院": ("土木工程", "建筑学", "城乡规划"),
    "经济管理学院": ("会计学", "金融工程", "工商管理", "国际经济与贸易"),
    "文法学院": ("法学", "汉语言文学", "英语", "新闻学"),
}
MENU = ["网站首页", "学校概况", "招生政策", "招生计划", "历年分数", "专业介绍", "报考指南", "在线咨询"]
LINKS = ["教育部阳光高考平台", "江城理工大学主页", "研究生招生网", "继续教育学院"]
FEES = {"建筑学": 6800, "城乡规划": 6800, "软件工程": 12800, "工业设计": 7500}


@dataclass(slots=True)
class Major:
    school: str
    name: str
    phys: tuple[int, int, int] | None  # 最高, 最低, 平均 (None: not enrolled in this track)
    hist: tuple[int, int, int] | None
    plan: int = 0
    fee: int = 5500


@dataclass(slots=True)
class ScorePage:
    file: str
    code: str
    province: str
    year: int
    lines: dict[str, tuple[int, int]] = field(default_factory=dict)  # 科类 → (省控线, 我校最低分)
    majors: list[Major] = field(default_factory=list)


@dataclass(slots=True)
class HardSite:
    pages: list[ScorePage]
    finance: dict[str, dict[int, float]]  # 项目 → year → 万元
    stats: dict[int, tuple[int, int, float]]  # year → 招生人数, 毕业人数, 就业率


def _triple(rng: random.Random, base: int) -> tuple[int, int, int]:
    low = base + rng.randint(-20, 25)
    high = low + rng.randint(4, 30)
    return high, low, rng.randint(low + 1, high - 1)


def _majors(rng: random.Random, base: int) -> list[Major]:
    out = []
    for school, names in SCHOOLS.items():
        for name in names:
            if rng.random() < 0.15:
                continue  # not enrolled in this province this year
            humanities = school in ("经济管理学院", "文法学院")
            phys = _triple(rng, base + 8) if not (humanities and rng.random() < 0.3) else None
            hist = _triple(rng, base - 6) if humanities or rng.random() < 0.2 else None
            if phys is None and hist is None:
                phys = _triple(rng, base + 8)
            out.append(Major(school, name, phys, hist, rng.randint(2, 40), FEES.get(name, 5500)))
    return out


def make_hard_site(folder: Path, seed: int = 23) -> HardSite:
    """The site's pages in ``folder`` (see the module docstring)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    pages: list[ScorePage] = []
    for code, province in PROVINCES.items():
        base = rng.randint(500, 600)
        for year in YEARS:
            page = ScorePage(f"score-{code}-{year}.html", code, province, year)
            for track in ("物理类", "历史类"):
                line = base - rng.randint(40, 90) + (0 if track == "物理类" else 15)
                page.lines[track] = (line, line + rng.randint(30, 80))
            page.majors = _majors(rng, base)
            (folder / page.file).write_text(_score_html(page, rng), "utf-8")
            pages.append(page)
    finance = {
        item: {y: round(rng.uniform(lo, hi), 2) for y in range(2019, 2024)}
        for item, lo, hi in (
            ("一、收入合计", 150000, 210000), ("其中：财政拨款收入", 80000, 110000),
            ("事业收入", 40000, 60000), ("科研收入", 15000, 30000),
            ("二、支出合计", 140000, 200000), ("其中：教育支出", 90000, 130000),
        )
    }  # fmt: skip
    stats = {y: (rng.randint(4800, 6200), rng.randint(4500, 6000), round(rng.uniform(88, 97), 1))
             for y in range(2018, 2024)}  # fmt: skip
    (folder / "finance.html").write_text(_finance_html(finance, rng), "utf-8")
    (folder / "stats.html").write_text(_stats_html(stats, rng), "utf-8")
    for n, topic in enumerate(("2023年招生章程", "强基计划报名须知", "新生入学指南", "校园开放日")):
        body = f"<p>{topic}。" + "请考生认真阅读，按时完成相关手续。" * 5 + "</p>"
        (folder / f"news-{n}.html").write_text(_chrome(topic, body, rng, n), "utf-8")
    return HardSite(pages, finance, stats)


# -- HTML --------------------------------------------------------------------------------------------
def _chrome(title: str, body: str, rng: random.Random, n: int) -> str:
    menu = " | ".join(f'<a href="/m{i}.html">{m}</a>' for i, m in enumerate(MENU))
    links = "".join(f'<p><a href="#">{x}</a></p>' for x in LINKS)
    head_title = f"{title}_{SITE}" if n % 2 else SITE
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{head_title}</title></head><body>"
        f"<div class='top'><p class='logo'>{SITE}</p><p>招生热线：027-8765 4321　"
        "咨询QQ群：123456789</p></div>"
        f"<div class='menu'><p>{menu}</p></div>"
        "<div class='where'><p>当前位置：<a href='/'>首页</a> &gt; <a href='#'>招生信息</a> &gt; "
        f"{title}</p></div>"
        f"<div class='content'><h3 class='art-title'>{title}</h3>"
        f"<p class='meta'>发布时间：{2021 + n % 3}-07-{10 + n % 18:02d}　"
        f"浏览次数：{rng.randint(300, 9000)}</p>"
        f"{body}</div>"
        f"<div class='side'><p>相关链接</p>{links}</div>"
        "<div class='foot'><p>版权所有 © 江城理工大学招生与就业处　鄂ICP备05003529号</p>"
        "<p>地址：江城市学府路88号　邮编：430070　电话：027-87654321</p></div>"
        "</body></html>"
    )


def _td(v: Any, **attrs: Any) -> str:
    extra = "".join(f" {k}='{a}'" for k, a in attrs.items())
    return f"<td{extra}>{'—' if v is None else v}</td>"


def _lines_table(page: ScorePage) -> str:
    rows = "".join(
        f"<tr><td>{track}</td><td>本科批</td><td>{line}</td><td>{low}</td><td>{low - line}</td></tr>"
        for track, (line, low) in page.lines.items()
    )
    return (
        "<p class='title'><strong>一、各科类录取控制线及我校录取最低分</strong></p>"
        "<table border='1'><tr><td>科类</td><td>批次</td><td>省控线</td><td>我校最低分</td>"
        f"<td>线差</td></tr>{rows}</table>"
    )


def _grouped_table(page: ScorePage) -> str:
    head = (
        "<tr><th rowspan='2'>学院</th><th rowspan='2'>专业名称</th><th colspan='3'>物理类</th>"
        "<th colspan='3'>历史类</th></tr><tr>" + "<th>最高分</th><th>最低分</th><th>平均分</th>" * 2 + "</tr>"
    )
    body = ""
    for school in SCHOOLS:
        mine = [m for m in page.majors if m.school == school]
        for i, m in enumerate(mine):
            cells = _td(school, rowspan=len(mine)) if i == 0 else ""
            cells += _td(m.name)
            for t in (m.phys, m.hist):
                cells += "".join(_td(v) for v in (t or (None, None, None)))
            body += f"<tr>{cells}</tr>"
    return (
        "<p class='title'><strong>二、分专业录取情况</strong></p>"
        f"<table border='1' class='MsoTable'><thead>{head}</thead><tbody>{body}</tbody></table>"
    )


def _split_tables(page: ScorePage) -> str:
    out = ""
    for n, (track, pick) in enumerate((("物理类", "phys"), ("历史类", "hist")), 2):
        rows = [(m.name, getattr(m, pick)) for m in page.majors if getattr(m, pick) is not None]
        body = "".join(f"<tr><td>{name}</td>{''.join(_td(v) for v in t)}</tr>" for name, t in rows)
        out += (
            f"<h4>{'二三'[n - 2]}、{track}（首选科目）录取分数</h4>"
            "<table border='1'><tr><td>专业</td><td>最高分</td><td>最低分</td><td>平均分</td></tr>"
            f"{body}</table>"
        )
    return out


def _old_table(page: ScorePage) -> str:
    head = (
        "<tr><td colspan='7'>单位：分</td></tr>"
        "<tr><td rowspan='2'>专业</td><td colspan='3'>理工</td><td colspan='3'>文史</td></tr>"
        "<tr>" + "<td>最高</td><td>最低</td><td>平均</td>" * 2 + "</tr>"
    )
    body = ""
    for m in page.majors:
        cells = _td(m.name)
        for t in (m.phys, m.hist):
            cells += "".join(_td(v) for v in (t or (None, None, None)))
        body += f"<tr>{cells}</tr>"
    return f"<p class='title'><strong>二、各专业录取分数</strong></p><table border='1'>{head}{body}</table>"


def _plan_table(page: ScorePage) -> str:
    body = "".join(
        f"<tr><td>{m.name}</td><td>{m.plan}</td><td>四年</td><td>{m.fee:,}</td></tr>" for m in page.majors
    )
    return (
        f"<p class='title'><strong>{page.year}年在{page.province}招生计划</strong></p>"
        "<table border='1'><tr><th>专业</th><th>计划数（人）</th><th>学制</th><th>学费（元/年）</th></tr>"
        f"{body}</table><p>注：建筑学、城乡规划学制五年；学费以物价部门核定为准。</p>"
    )


def _score_html(page: ScorePage, rng: random.Random) -> str:
    title = f"{page.year}年{page.province}录取分数统计"
    majors = {"grouped": _grouped_table, "split": _split_tables, "old": _old_table}[STYLE[page.code]](page)
    body = (
        f"<p>{page.year}年我校在{page.province}录取工作已顺利结束，现将录取情况公布如下：</p>"
        + _lines_table(page)
        + majors
        + "<p>注：1. 表中分数均为投档成绩（含政策加分）。2. “—”表示该专业当年在该科类未安排计划。</p>"
        + _plan_table(page)
    )
    return _chrome(title, body, rng, YEARS.index(page.year) + len(page.majors))


def _finance_html(finance: dict[str, dict[int, float]], rng: random.Random) -> str:
    years = sorted(next(iter(finance.values())))
    head = "<tr><th>项目</th>" + "".join(f"<th>{y}年</th>" for y in years) + "</tr>"
    body = "".join(
        f"<tr><td>{item}</td>" + "".join(f"<td>{v[y]:,.2f}</td>" for y in years) + "</tr>"
        for item, v in finance.items()
    )
    return _chrome(
        "学校近五年经费收支情况",
        "<p>根据信息公开要求，现将我校2019—2023年经费收支情况公布如下。</p>"
        f"<p class='title'><strong>学校经费收支情况（单位：万元）</strong></p>"
        f"<table border='1'>{head}{body}</table><p>注：数据来源于学校年度决算报告。</p>",
        rng,
        7,
    )


def _stats_html(stats: dict[int, tuple[int, int, float]], rng: random.Random) -> str:
    body = "".join(
        f"<tr><td>{y}</td><td>{a:,}</td><td>{b:,}</td><td>{r}</td></tr>" for y, (a, b, r) in stats.items()
    )
    return _chrome(
        "本科生招生与就业统计",
        "<p class='title'><strong>历年本科招生及毕业生就业情况</strong></p>"
        "<table border='1'><tr><th>年份</th><th>招生人数（人）</th><th>毕业人数（人）</th>"
        f"<th>就业率（%）</th></tr>{body}</table><p>注：就业率为当年8月31日统计口径。</p>",
        rng,
        9,
    )


# -- questions -----------------------------------------------------------------------------------------
_CELL_PHRASES = (
    "{y}年{p}{t}{m}最低分是多少？",
    "{m}专业{y}年在{p}{t}的最低录取分",
    "{p}考生{y}年报{m}（{t}）最低要多少分",
    "{cy}年{p}{m}{t}最低分",
    "{y}年{m}在{p}录取的{t}平均分是多少",
    "{p}{y}年{t}{m}最高分多少？",
)


def _track_values(m: Major, track: str) -> tuple[int, int, int] | None:
    return m.phys if track == "物理类" else m.hist


def _cell_questions(site: HardSite, rng: random.Random) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for page in site.pages:
        for phrase in rng.sample(_CELL_PHRASES, 3):
            track = rng.choice(("物理类", "历史类"))
            m = rng.choice([m for m in page.majors if _track_values(m, track) is not None])
            values = _track_values(m, track)
            assert values is not None
            pick = 2 if "平均" in phrase else 0 if "最高" in phrase else 1
            q = phrase.format(y=page.year, cy=CN_YEARS[page.year], p=page.province, t=track, m=m.name)
            cells.append({"q": q, "doc": page.file, "gold": str(values[pick]), "kind": "major"})
        track = rng.choice(("物理类", "历史类"))
        line, _ = page.lines[track]
        cells.append({"q": f"{page.year}年{page.province}{track}本科批省控线是多少？", "doc": page.file,
                      "gold": str(line), "kind": "row+column"})  # fmt: skip
        m = rng.choice(page.majors)
        cells.append({"q": f"{page.year}年{m.name}专业在{page.province}的学费是多少？", "doc": page.file,
                      "gold": str(m.fee), "kind": "plan"})  # fmt: skip
    for item, values in site.finance.items():
        year = rng.choice(sorted(values))
        name = item.split("：")[-1].split("、")[-1]
        cells.append({"q": f"{year}年学校{name}是多少万元？", "doc": "finance.html",
                      "gold": f"{values[year]:.2f}", "kind": "years as columns"})  # fmt: skip
    for year, (admitted, _, rate) in site.stats.items():
        cells.append({"q": f"{year}年招生人数是多少？", "doc": "stats.html", "gold": str(admitted),
                      "kind": "years as rows"})  # fmt: skip
        cells.append({"q": f"{year}年毕业生就业率", "doc": "stats.html", "gold": str(rate),
                      "kind": "years as rows"})  # fmt: skip
    return cells


def _aggregates(site: HardSite, rng: random.Random) -> list[dict[str, Any]]:
    aggs: list[dict[str, Any]] = []
    for page in rng.sample(site.pages, 8):
        lows = [(m.name, m.phys[1]) for m in page.majors if m.phys is not None]
        best = max(v for _, v in lows)
        aggs.append({"q": f"{page.year}年{page.province}物理类哪个专业最低分最高？", "doc": page.file,
                     "gold": [n for n, v in lows if v == best]})  # fmt: skip
        aggs.append({"q": f"{page.year}年在{page.province}一共招了多少个专业？", "doc": page.file,
                     "gold": [str(len(page.majors))]})  # fmt: skip
    by_key = {(p.code, p.year): p for p in site.pages}
    for code in list(PROVINCES)[:4]:
        common = set.intersection(
            *({m.name for m in by_key[(code, y)].majors if m.phys is not None} for y in YEARS)
        )
        name = sorted(common)[0]
        values = [
            next(m.phys[1] for m in by_key[(code, y)].majors if m.name == name and m.phys) for y in YEARS
        ]
        aggs.append({"q": f"2021到2023年{PROVINCES[code]}{name}物理类最低分的变化",
                     "doc": f"score-{code}-2021.html", "gold": [str(v) for v in values]})  # fmt: skip
    rates = {y: r for y, (_, _, r) in site.stats.items()}
    top = max(rates.values())
    aggs.append({"q": "哪一年就业率最高？", "doc": "stats.html",
                 "gold": [str(y) for y, r in rates.items() if r == top]})  # fmt: skip
    admitted = [a for a, _, _ in site.stats.values()]
    aggs.append({"q": "历年招生人数平均是多少？", "doc": "stats.html",
                 "gold": [f"{statistics.mean(admitted):.2f}".rstrip("0").rstrip(".")]})  # fmt: skip
    aggs.append({"q": "招生人数超过5500人的有几年？", "doc": "stats.html",
                 "gold": [str(sum(1 for a in admitted if a > 5500))]})  # fmt: skip
    return aggs


def _unanswerable(site: HardSite, rng: random.Random) -> list[dict[str, Any]]:
    every = {n for names in SCHOOLS.values() for n in names}
    out: list[dict[str, Any]] = []
    for page in rng.sample(site.pages, 10):
        missing = sorted(every - {m.name for m in page.majors})
        if missing:
            q = f"{page.year}年{page.province}物理类{missing[0]}最低分是多少？"
            out.append({"q": q, "doc": page.file})
    out += [
        {"q": "2025年四川省物理类软件工程最低分是多少？", "doc": ""},
        {"q": "2023年西藏自治区物理类法学最低分是多少？", "doc": ""},
        {"q": "临床医学专业在河南省的最低分是多少？", "doc": ""},
        {"q": "学校食堂几点开门？", "doc": ""},
    ]
    return out


def followup_pairs(site: HardSite, seed: int = 41) -> list[dict[str, Any]]:
    """A cell question, then a follow-up changing its year (「那2022年呢」) or its 科类
    (「历史类的呢」): the follow-up's gold is the other table's (or column's) cell."""
    rng = random.Random(seed)
    by_key = {(p.code, p.year): p for p in site.pages}
    out: list[dict[str, Any]] = []
    for page in rng.sample(site.pages, 12):
        other_year = rng.choice([y for y in YEARS if y != page.year])
        other = by_key[(page.code, other_year)]
        both = [m for m in page.majors if m.phys and any(o.name == m.name and o.phys for o in other.majors)]
        m = rng.choice(both)
        first = f"{page.year}年{page.province}物理类{m.name}最低分是多少？"
        gold = next(o.phys[1] for o in other.majors if o.name == m.name and o.phys)
        out.append({"q": first, "follow": f"那{other_year}年呢", "doc": other.file, "gold": str(gold)})
        tracks = [m for m in page.majors if m.phys and m.hist]
        if tracks:
            m = rng.choice(tracks)
            assert m.hist is not None
            out.append({"q": f"{page.year}年{page.province}物理类{m.name}最低分是多少？",
                        "follow": "历史类的呢？", "doc": page.file, "gold": str(m.hist[1])})  # fmt: skip
    return out


def hard_questions(
    site: HardSite, seed: int = 31
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(cell questions, aggregate questions, questions no table answers), gold answers computed."""
    rng = random.Random(seed)
    return _cell_questions(site, rng), _aggregates(site, rng), _unanswerable(site, rng)
