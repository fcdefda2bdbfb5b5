"""``zhiwen listings ask`` and ``zhiwen ask --kb listings``: table + answer, or the JSON data."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from zhiwen.apps.listings.service import reset_services
from zhiwen.cli.main import app as cli
from zhiwen.config import Settings, reset_settings_cache


@pytest.fixture
def runner(sh_kb: Any, sh_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ZHIWEN_HOME", str(sh_settings.home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    reset_services()
    return CliRunner()


def test_listings_ask_json(runner: CliRunner) -> None:
    r = runner.invoke(cli, ["listings", "ask", "--json", "-n", "2", "徐汇区三房，900万以内"])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert len(printed["retrieved_properties"]) == 2
    assert printed["llm_used"] is False and printed["answer"] and "params" in printed


def test_ask_dispatches_to_listings_table(runner: CliRunner) -> None:
    r = runner.invoke(cli, ["ask", "--kb", "listings", "--top-k", "3", "浦东800万以内的两房，要有电梯"])
    assert r.exit_code == 0, r.output
    assert "推荐房源" in r.output and "浦东新区" in r.output and "未配置大模型" in r.output
    reset_services()
