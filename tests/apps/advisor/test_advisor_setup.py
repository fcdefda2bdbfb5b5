"""``zhiwen advisor setup``: the market tables, then each KB named with an ETA; the advisor answers
before the vectors exist, and ``--wait`` fills them in the setup (hash embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from advisor_questions import make_settings
from typer.testing import CliRunner

from support.setup_home import flat, fresh_home
from zhiwen.apps.advisor.app import AdvisorApp
from zhiwen.apps.advisor.tools import FAQ_KB, POLICY_KB
from zhiwen.kb import open_kb

runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from fresh_home(tmp_path, monkeypatch)


def coverage(home: Path, name: str) -> float | None:
    return open_kb(name, settings=make_settings(home)).dense_coverage()


def test_setup_names_each_kb_and_answers_before_the_vectors(home: Path, shared: Path) -> None:
    r = runner.invoke(AdvisorApp().cli(), ["setup", str(shared)])
    assert r.exit_code == 0, r.output
    out = flat(r.stdout)
    assert (
        out.index("市场数据表")
        < out.index("预计：文本索引约")
        < out.index("[1/2]知识库advisor_policy「购房相关法规")
    )
    assert "[2/2]知识库advisor_faq「购房常见问题」" in out and "市场数据：7962套挂牌房源" in out
    assert "向量还差" in out and "zhiwenserve" in out and "zhiwenadvisorchat-m" in out
    assert coverage(home, POLICY_KB) == 0.0 and coverage(home, FAQ_KB) == 0.0
    chat = runner.invoke(AdvisorApp().cli(), ["chat", "-m", "买二手房的流程是什么？", "--json"])
    assert chat.exit_code == 0, chat.output
    assert "网签" in chat.stdout  # the FAQ answered from its text index


def test_wait_fills_the_vectors(home: Path, shared: Path) -> None:
    r = runner.invoke(AdvisorApp().cli(), ["setup", str(shared), "--wait", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "向量已全部补全" in flat(r.stdout) and "预计" not in r.stdout  # --quiet: no progress lines
    assert coverage(home, POLICY_KB) == 1.0 and coverage(home, FAQ_KB) == 1.0
