"""``zhiwen advisor …`` (the app's Typer group): setup, one-shot and interactive chat, calculators."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from advisor_questions import DISCUSSION_QUESTION, DISTRICT_QUESTION, LOAN_QUESTION, TAX_QUESTION
from typer.testing import CliRunner

from zhiwen.appkit.app import AppContext
from zhiwen.apps.advisor.app import AdvisorApp
from zhiwen.config import reset_settings_cache

runner = CliRunner()


@pytest.fixture
def cli_env(advisor_ctx: AppContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The CLI's settings come from the environment: point them at the session home."""
    monkeypatch.setenv("ZHIWEN_HOME", str(advisor_ctx.settings.home))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    reset_settings_cache()
    yield
    reset_settings_cache()


def run(*args: str, input: str | None = None) -> str:
    result = runner.invoke(AdvisorApp().cli(), list(args), input=input)
    assert result.exit_code == 0, result.output
    return result.output


def test_chat_one_shot_renders_the_roles(cli_env: None) -> None:
    out = run("chat", "-m", LOAN_QUESTION)
    assert "💰 财务顾问" in out and "8,967.34元" in out and "还款压力：中" in out
    assert "🏠 购房顾问" in out
    tax = run("chat", "-m", TAX_QUESTION)
    assert "📜 政策专家" in tax and "2024-12-01" in tax
    market = run("chat", "-m", DISTRICT_QUESTION)
    assert "📊 市场分析师" in market and "2019年6月" in market


def test_chat_json_and_discussion(cli_env: None) -> None:
    data = json.loads(run("chat", "-m", LOAN_QUESTION, "--json"))
    assert data["data"]["roles"][0]["tool_calls"][0]["result"]["monthly_payment"] == 8967.34
    out = run("chat", "--mode", "discussion", "-m", DISCUSSION_QUESTION)
    assert "第1轮" in out and "由200万元调整为150万元" in out


def test_interactive_chat_keeps_the_session(cli_env: None) -> None:
    out = run("chat", input=f"{LOAN_QUESTION}\n那如果首付150万呢？\n退出\n")
    assert "8,967.34元" in out and "6,405.25元" in out


def test_calculators(cli_env: None) -> None:
    out = run(
        "calc", "loan", "--price", "3000000", "--down-payment-ratio", "0.3", "--years", "30", "--rate", "3.1"
    )
    assert "8,967.34元" in out and "1,128,243.98元" in out
    data = json.loads(
        run(
            "calc",
            "tax",
            "--price",
            "3000000",
            "--area",
            "150",
            "--second-home",
            "--house-age",
            "1",
            "--json",
        )
    )
    assert data["deed_tax"] == 60_000.0 and data["vat"] == 150_000.0 and data["rule"]["id"] == "2024-16"
    bad = runner.invoke(
        AdvisorApp().cli(),
        ["calc", "loan", "--price", "3000000", "--down-payment-ratio", "0.3", "--years", "50", "--rate", "3"],
    )
    assert bad.exit_code != 0 and "输入参数有误：years" in bad.output


LOAN = ["calc", "loan", "--price", "3000000", "--down-payment-ratio", "0.3", "--years", "30", "--rate", "3.1"]


@pytest.mark.parametrize(
    ("option", "value", "hint"),
    [
        ("--rate", "0.031", "利率请按百分数填写，如 3.1 表示 3.1%"),
        ("--down-payment-ratio", "30", "首付比例请按小数填写，如 0.3 表示三成"),
        ("--price", "300", "房价请按元填写，如 300 万元填 3000000"),
        ("--years", "360", "360 个月请填 30"),
        ("--down-payment-ratio", "-0.1", "首付比例，必须大于等于 0"),
    ],
)
def test_a_number_in_the_wrong_unit_is_one_chinese_line_and_a_failure(
    cli_env: None, option: str, value: str, hint: str
) -> None:
    args = list(LOAN)
    args[args.index(option) + 1] = value
    bad = runner.invoke(AdvisorApp().cli(), args)
    assert bad.exit_code != 0 and hint in bad.output and "月供" not in bad.output
    line = bad.output.strip()
    assert "\n" not in line and not re.search(r"[A-Za-z]{3,} [a-z]{3,}", line), line  # no English tail


def test_setup_builds_everything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path) -> None:
    monkeypatch.setenv("ZHIWEN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    reset_settings_cache()
    try:
        out = run("setup", str(shared), "--quiet")
    finally:
        reset_settings_cache()
    assert "advisor_policy" in out and "advisor_faq" in out and "7962" in out
    assert (tmp_path / "home" / "apps" / "advisor" / "market.json").is_file()
