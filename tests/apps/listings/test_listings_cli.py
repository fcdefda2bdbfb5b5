"""``cli_ask`` (what ``zhiwen ask --kb listings`` dispatches to): table + answer, or JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zhiwen.apps.listings.cli import cli_ask
from zhiwen.apps.listings.service import reset_services


def test_cli_ask_json(sh_kb: Any, capsys: pytest.CaptureFixture[str]) -> None:
    reset_services()
    out = cli_ask(sh_kb, "徐汇区三房，900万以内", json_output=True, max_results=2)
    printed = json.loads(capsys.readouterr().out)
    assert printed["retrieved_properties"] == out["retrieved_properties"]
    assert len(printed["retrieved_properties"]) == 2
    assert printed["llm_used"] is False and printed["answer"]


def test_cli_ask_table(sh_kb: Any, capsys: pytest.CaptureFixture[str]) -> None:
    out = cli_ask(sh_kb, "浦东800万以内的两房，要有电梯", json_output=False, top_k=3)
    text = capsys.readouterr().out
    assert "推荐房源" in text and "浦东新区" in text and "未配置大模型" in text
    assert len(out["retrieved_properties"]) == 3
    reset_services()
