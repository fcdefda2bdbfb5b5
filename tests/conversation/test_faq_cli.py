"""The CLI door of #36/#37: ``zhiwen ask`` / ``chat`` print 「回答编号：…」, the 「FAQ」 badge and
「您是不是想问：」, ``--json`` carries the fields, every answer lands in the home's question log,
and ``zhiwen feedback`` rates an answer by its id."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faq_home import ENTRIES, FAQ, HIT, KB, NEAR, NEAR_SUGGESTED, build_manual
from typer.testing import CliRunner, Result

from support.setup_home import flat
from zhiwen.config import get_settings, reset_settings_cache
from zhiwen.kb import close_all
from zhiwen.questionlog import LogWindow, open_question_log


@pytest.fixture
def zw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Result]]:
    monkeypatch.setenv("ZHIWEN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.setenv("ZHIWEN_FAQ__SUGGEST_FLOOR", str(FAQ.suggest_floor))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    reset_settings_cache()
    build_manual(get_settings())
    from zhiwen.cli.main import app

    runner = CliRunner()
    yield lambda *args, input=None: runner.invoke(app, list(args), input=input)
    close_all()
    reset_settings_cache()


def _answer_id(output: str) -> str:
    line = next(line for line in output.splitlines() if "回答编号：" in line)
    return line.split("回答编号：", 1)[1][:16]


def test_ask_prints_the_faq_answer_its_badge_and_id_and_logs_it(zw: Callable[..., Result]) -> None:
    r = zw("ask", "--kb", KB, HIT)
    assert r.exit_code == 0, r.output
    out = flat(r.output)
    assert flat(ENTRIES[0].answer) in out and "FAQ" in out and flat(ENTRIES[0].question) in out
    answer_id = _answer_id(r.output)
    with open_question_log(get_settings()) as question_log:
        record = question_log.find(answer_id)
    assert (record.kb, record.answer_type, record.faq_id, record.caller) == (KB, "faq", "import-pdf", "")


def test_ask_near_miss_suggests_and_json_carries_the_fields(zw: Callable[..., Result]) -> None:
    r = zw("ask", "--kb", KB, NEAR)
    assert r.exit_code == 0, r.output
    assert "您是不是想问：" in r.output and flat(NEAR_SUGGESTED) in flat(r.output)
    data = json.loads(zw("ask", "--kb", KB, "--json", HIT).stdout)
    assert data["answer_type"] == "faq" and data["faq"]["entry_id"] == "import-pdf"
    assert len(data["answer_id"]) == 16 and data["suggestions"] == []


def test_chat_prints_the_answer_id(zw: Callable[..., Result]) -> None:
    r = zw("chat", "--kb", KB, input=f"{HIT}\n/exit\n")
    assert r.exit_code == 0, r.output
    answer_id = _answer_id(r.output)
    with open_question_log(get_settings()) as question_log:
        assert question_log.find(answer_id).app == "qa"
        assert question_log.questions(KB, LogWindow()).total == 1


def test_feedback_rates_an_answer_and_refuses_an_unknown_one(zw: Callable[..., Result]) -> None:
    answer_id = _answer_id(zw("ask", "--kb", KB, HIT).output)
    r = zw("feedback", answer_id, "down", "--reason", "内容过时", "--comment", "已调整")
    assert r.exit_code == 0, r.output
    assert "已记录评价：没用（内容过时）" in flat(r.output)
    with open_question_log(get_settings()) as question_log:
        listed = question_log.questions(KB, LogWindow(), "disliked").items
    assert [(q.record.answer_id, q.feedback[0].comment) for q in listed] == [(answer_id, "已调整")]
    missing = zw("feedback", "0000000000000000", "up")
    assert missing.exit_code != 0 and "回答不存在" in missing.output
    bad = zw("feedback", answer_id, "meh")
    assert bad.exit_code != 0 and "评价只能是" in bad.output
