"""Table files made in the tests: pages of an admission site (two-level headers, the site's title)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SITE_TITLE = "东湖大学阳光招生信息平台"
NAV = "".join(
    f"<li><a href='#'>{x}</a></li>" for x in ["首页", "最新动态", "招生动态", "新闻聚焦", "招生信息"]
)


def admission_page(year: int, province: str, rows: list[tuple[str, Any, Any, Any, Any]]) -> str:
    """A page of the admission site: the site's title, a menu, one two-level-header table."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f"<html><head><meta charset='utf-8'><title>{SITE_TITLE}</title></head><body>"
        f"<div class='nav'><ul>{NAV}</ul></div><div class='main'>"
        f"<h2>{year}年{province}录取分数线</h2>"
        "<table><thead><tr><th rowspan='2'>专业名称</th><th colspan='2'>文史/历史类</th>"
        "<th colspan='2'>理工/物理类</th></tr><tr><th>最高</th><th>最低</th><th>最高</th><th>最低</th></tr>"
        f"</thead><tbody>{body}</tbody></table></div>"
        "<div class='footer'><p>版权所有 东湖大学招生就业处</p></div></body></html>"
    )


ROWS = {
    (2021, "四川省"): [
        ("法学", 640, 631, 650, 644),
        ("金融学类", 630, 618, 620, 612),
        ("哲学类", 610, 601, "-", "-"),
    ],
    (2022, "四川省"): [
        ("法学", 645, 633, 652, 646),
        ("金融学类", 628, 620, 622, 615),
        ("哲学类", 612, 605, 600, 598),
    ],
    (2023, "四川省"): [
        ("法学", 650, 640, 655, 648),
        ("金融学类", 633, 619, 625, 610),
        ("哲学类", 611, 600, 602, 597),
    ],
    (2023, "甘肃省"): [
        ("法学", 600, 590, 610, 604),
        ("金融学类", 598, 588, 609, 600),
        ("哲学类", 590, 580, 588, 585),
    ],
}


def make_site(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for (year, province), rows in ROWS.items():
        (folder / f"{year}-{province}.html").write_text(admission_page(year, province, rows), "utf-8")
    return folder
