"""The listings' terminal view in an 80-column terminal: every title, place and detail whole."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from zhiwen.apps.listings.cli import render
from zhiwen.apps.listings.service import reset_services
from zhiwen.config import Settings, reset_settings_cache

_FRAME = re.compile(r"[\s\u2500-\u257f]+")

PROPS = [
    {
        "title": "满五唯一 南北通透 地铁口精装两房 采光好 随时看房 业主诚心出售",
        "district": "浦东新区",
        "bankuai": "张江",
        "xiaoqu": "汤臣豪园三期东区",
        "layout": "2室1厅",
        "area": 89.5,
        "price": 780.0,
        "floor": "中楼层/共18层",
        "build_year": 2008,
        "decoration": "精装",
        "elevator": True,
        "match_percentage": 92,
        "match_reasons": ["总价780万，在800万以内", "2室，符合两房", "有电梯"],
    },
    {
        "title": "徐汇滨江一线江景大三房",
        "district": "徐汇区",
        "bankuai": "滨江",
        "xiaoqu": "某某花园",
        "layout": "3室2厅",
        "area": 143.0,
        "price": 1580.0,
        "elevator": False,
        "match_percentage": 61,
        "match_reasons": [],
    },
]


def squash(text: str) -> str:
    return _FRAME.sub("", text)


def shown(width: int) -> str:
    out = Console(width=width, file=io.StringIO(), record=True)
    render({"retrieved_properties": PROPS, "answer": "为您找到 2 套房源。", "total_matches": 37}, out)
    return out.export_text()


def test_listings_render_whole_at_80_columns() -> None:
    narrow, wide = shown(80), shown(300)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "…" not in narrow and "…" not in wide
    flat = squash(narrow)
    for p in PROPS:
        assert squash(str(p["title"])) in flat and str(p["xiaoqu"]) in flat
    assert "中楼层/共18层，2008年，精装，有电梯" in flat and "符合条件的房源：37套" in flat


@pytest.fixture
def runner(sh_kb: Any, sh_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ZHIWEN_HOME", str(sh_settings.home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    reset_settings_cache()
    reset_services()
    return CliRunner()


def test_listings_ask_at_80_columns(runner: CliRunner) -> None:
    from zhiwen.cli.main import app as cli

    r = runner.invoke(cli, ["listings", "ask", "-n", "3", "浦东800万以内的两房，要有电梯"])
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80
    assert "推荐房源" in r.output and "…" not in r.output
    reset_services()
