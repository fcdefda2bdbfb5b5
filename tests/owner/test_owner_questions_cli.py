"""``zhiwen kb questions``, ``zhiwen kb stats`` and ``zhiwen kb delete`` taking the KB's log with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from zhiwen.config import Settings
from zhiwen.kb import KnowledgeBase
from zhiwen.questionlog import LoggedQuestion, new_answer_id, open_question_log


@pytest.fixture
def asked(settings: Settings, shop: KnowledgeBase) -> dict[str, str]:
    ids = {"unanswered": new_answer_id(), "faq": new_answer_id(), "other": new_answer_id()}
    with open_question_log(settings) as log:
        for key, kb, question, answer_type, answerable in (
            ("unanswered", "shop", "怎么退货？", "generated", False),
            ("faq", "shop", "换货要几天", "faq", True),
            ("other", "other", "别的问题", "generated", True),
        ):
            log.record(
                LoggedQuestion(
                    answer_id=ids[key], kb=kb, app="qa", question=question, answer_type=answer_type,
                    answerable=answerable, latency_ms=30.0,
                )
            )  # fmt: skip
    return ids


def _zw(*args: str) -> Result:
    from zhiwen.cli.main import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_questions_and_stats(asked: dict[str, str], tmp_path: Path) -> None:
    table = _zw("kb", "questions", "shop", "--status", "unanswered")
    assert table.exit_code == 0, table.output
    assert "怎么退货" in table.stdout and "换货" not in table.stdout
    got = json.loads(_zw("kb", "questions", "shop", "--days", "7", "--json").stdout)
    assert got["total"] == 2 and asked["other"] not in {q["answer_id"] for q in got["items"]}
    out = tmp_path / "q.jsonl"
    assert _zw("kb", "questions", "shop", "--export", str(out)).exit_code == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
    stats = json.loads(_zw("kb", "stats", "shop", "--days", "7", "--json").stdout)
    assert stats["overall"]["questions"] == 2 and stats["overall"]["faq_hit_rate"] == 0.5
    shown = _zw("kb", "stats", "shop")
    assert shown.exit_code == 0 and "合计" in shown.stdout and "50%" in shown.stdout
    bad = _zw("kb", "questions", "shop", "--status", "weird")
    assert bad.exit_code != 0 and "--status" in bad.output
    assert _zw("kb", "questions", "ghost").exit_code != 0


def test_kb_delete_deletes_its_log(asked: dict[str, str], settings: Settings) -> None:
    done = _zw("kb", "delete", "shop", "--yes")
    assert done.exit_code == 0, done.output
    with open_question_log(settings) as log:
        assert log.store.find(asked["unanswered"]) is None
        assert log.store.find(asked["other"]) is not None
