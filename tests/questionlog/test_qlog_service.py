"""The question log as the interfaces call it: record, rate, the owner's reads, access."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from qlog_records import T0, rec

from zhiwen.config import LogSettings, Settings, get_settings
from zhiwen.errors import Forbidden, InvalidParameter
from zhiwen.httpkit.auth import Access
from zhiwen.questionlog import (
    AnswerNotFound,
    LogWindow,
    QuestionLog,
    SourceRef,
    may_rate,
    may_read_log,
    new_answer_id,
    open_question_log,
    require_log_reader,
    sources_of,
)
from zhiwen.questionlog.sqlite import SQLiteQuestionStore

KEEP = LogSettings(retention_days=0, flush_interval_s=0.01)


@pytest.fixture
def qlog(tmp_path: Path) -> Iterator[QuestionLog]:
    log = QuestionLog(lambda: SQLiteQuestionStore(tmp_path / "questions.sqlite"), KEEP)
    yield log
    log.close()


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_record_then_rate_then_read(qlog: QuestionLog) -> None:
    q = rec()
    assert qlog.record(q)
    fb = qlog.rate(q.answer_id, "down", reason="内容过时", comment="  价格是去年的  ", caller="fp-9")
    assert (fb.kb, fb.reason, fb.reason_label, fb.comment) == (
        "manual",
        "outdated",
        "内容过时",
        "价格是去年的",
    )
    page = qlog.questions("manual", LogWindow(), "disliked")
    assert page.total == 1 and page.items[0].feedback[0].caller == "fp-9"
    # changed by the same caller: still one rating
    qlog.rate(q.answer_id, "up", caller="fp-9")
    assert qlog.questions("manual", LogWindow(), "disliked").total == 0
    assert qlog.questions("manual", LogWindow()).items[0].up == 1


def test_rating_an_unknown_answer_is_a_404_in_chinese(qlog: QuestionLog) -> None:
    with pytest.raises(AnswerNotFound) as caught:
        qlog.rate("0123456789abcdef", "up")
    assert caught.value.http_status == 404 and caught.value.code == 3004
    assert "回答不存在或已过期" in caught.value.message


def test_an_answer_of_a_kb_the_key_may_not_read_is_not_found(qlog: QuestionLog) -> None:
    q = rec(kb="secret")
    qlog.record(q)
    with pytest.raises(AnswerNotFound):
        qlog.rate(q.answer_id, "up", access=Access(kbs=frozenset({"manual"}), write=False))
    assert qlog.rate(q.answer_id, "up", access=Access(kbs=frozenset({"secret"}), write=False)).kb == "secret"


@pytest.mark.parametrize(
    ("rating", "reason", "comment", "says"),
    [
        ("meh", None, None, "评价只能是"),
        ("down", "太长", None, "未知的原因"),
        ("up", "off_topic", None, "只有「没用」"),
        ("down", "other", "长" * 1001, "补充说明过长"),
    ],
)
def test_bad_feedback_is_a_422_that_says_why(
    qlog: QuestionLog, rating: str, reason: str | None, comment: str | None, says: str
) -> None:
    q = rec()
    qlog.record(q)
    with pytest.raises(InvalidParameter) as caught:
        qlog.rate(q.answer_id, rating, reason=reason, comment=comment)
    assert caught.value.http_status == 422 and says in caught.value.message


def test_counters_are_counted_when_logged(qlog: QuestionLog) -> None:
    labels = {"kb": "count-kb", "app": "qa"}
    before = {
        n: metric(n, **labels)
        for n in ("zhiwen_questions_total", "zhiwen_questions_unanswered_total", "zhiwen_questions_faq_total")
    }
    tokens = metric("zhiwen_question_tokens_total", kind="prompt", **labels)
    qlog.record(rec(kb="count-kb", answer_type="faq", fallback=None))
    qlog.record(rec(kb="count-kb", answer_type="refused"))
    qlog.record(rec(kb="count-kb", answer_type="generated", llm_calls=1, prompt_tokens=120, fallback=None))
    assert metric("zhiwen_questions_total", **labels) - before["zhiwen_questions_total"] == 3
    assert (
        metric("zhiwen_questions_unanswered_total", **labels) - before["zhiwen_questions_unanswered_total"]
        == 1
    )
    assert metric("zhiwen_questions_faq_total", **labels) - before["zhiwen_questions_faq_total"] == 1
    assert metric("zhiwen_question_tokens_total", kind="prompt", **labels) - tokens == 120
    assert metric("zhiwen_question_seconds_count", **labels) >= 3


def test_a_log_turned_off_counts_but_keeps_nothing(tmp_path: Path) -> None:
    log = QuestionLog(lambda: SQLiteQuestionStore(tmp_path / "q.sqlite"), LogSettings(questions=False))
    before = metric("zhiwen_questions_total", kb="off-kb", app="qa")
    q = rec(kb="off-kb")
    assert not log.record(q)
    assert metric("zhiwen_questions_total", kb="off-kb", app="qa") - before == 1
    with pytest.raises(AnswerNotFound) as caught:
        log.rate(q.answer_id, "up")
    assert "问答记录未开启" in caught.value.message
    log.close()


def test_a_long_question_is_kept_cut(tmp_path: Path) -> None:
    settings = LogSettings(retention_days=0, max_text_chars=10)
    with QuestionLog(lambda: SQLiteQuestionStore(tmp_path / "q.sqlite"), settings) as log:
        q = rec(question="问" * 50)
        log.record(q)
        assert log.find(q.answer_id).question == "问" * 10


def test_stats_most_asked_export_and_delete(qlog: QuestionLog) -> None:
    for text in ("怎么创建知识库？", "怎么创建知识库", "支持哪些格式"):
        qlog.record(rec(question=text))
    qlog.flush()
    window = LogWindow()
    assert qlog.stats("manual", window).overall.questions == 3
    top = qlog.most_asked("manual", window)
    assert [(g.question, g.count) for g in top] == [("怎么创建知识库", 2), ("支持哪些格式", 1)]
    jsonl = "".join(qlog.export("manual", window, "jsonl"))
    assert len(jsonl.splitlines()) == 3
    assert qlog.delete_kb("manual") == 3
    assert qlog.questions("manual", window).total == 0


def test_a_window_is_days_in_the_log_timezone(tmp_path: Path) -> None:
    settings = LogSettings(retention_days=0, timezone="Asia/Shanghai")
    with QuestionLog(lambda: SQLiteQuestionStore(tmp_path / "q.sqlite"), settings) as log:
        # T0 is 2025-06-15 23:06 in Shanghai; an hour later it is the 16th there
        log.record(a := rec(at=T0))
        log.record(b := rec(at=T0 + 3600))
        log.flush()
        from datetime import date

        day15 = log.questions("manual", LogWindow(since=date(2025, 6, 15), until=date(2025, 6, 15)))
        assert [i.record.answer_id for i in day15.items] == [a.answer_id]
        days = log.stats("manual", LogWindow()).days
        assert [(d.day.isoformat() if d.day else None, d.questions) for d in days] == [
            ("2025-06-15", 1),
            ("2025-06-16", 1),
        ]
        assert b.answer_id
        from datetime import datetime
        from zoneinfo import ZoneInfo

        assert log.today() == datetime.now(ZoneInfo("Asia/Shanghai")).date()


def test_open_question_log_picks_the_home_or_postgresql(tmp_path: Path) -> None:
    home = Settings(home=tmp_path / "home")
    log = open_question_log(home)
    log.record(rec())
    log.flush()
    assert (tmp_path / "home" / "questions.sqlite").is_file()
    log.close()
    from zhiwen.questionlog.service import store_opener

    assert store_opener(Settings(store="postgresql://u@h/db")).__name__ == "postgres"


def test_the_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, zhiwen_home: Path) -> None:
    monkeypatch.setenv("ZHIWEN_LOG__QUESTIONS", "false")
    monkeypatch.setenv("ZHIWEN_LOG__RETENTION_DAYS", "30")
    monkeypatch.setenv("ZHIWEN_LOG_LEVEL", "DEBUG")
    get_settings.cache_clear()
    s = get_settings()
    assert (s.log.questions, s.log.retention_days, s.log_level) == (False, 30, "DEBUG")


def test_answer_ids_are_short_unique_and_sorted_by_time() -> None:
    ids = [new_answer_id(T0 + i / 1000) for i in range(2000)]
    assert len(set(ids)) == 2000 and ids == sorted(ids) and {len(i) for i in ids} == {16}


def test_sources_of_keeps_the_first_citations() -> None:
    refs = [SourceRef(f"d{i}", f"文档{i}", 1 - i / 10) for i in range(8)]
    assert [s.id for s in sources_of(refs, limit=3)] == ["d0", "d1", "d2"]


@pytest.mark.parametrize(
    ("access", "reads", "rates"),
    [
        (Access(), True, True),  # no credentials configured: open
        (Access(admin=True), True, True),
        (Access(kbs=frozenset({"manual"}), write=True), True, True),
        (Access(kbs=frozenset({"manual"}), write=False), False, True),  # a read-only key asks, rates
        (Access(kbs=frozenset({"other"}), write=True), False, False),  # another KB's key sees nothing
    ],
)
def test_who_may_read_the_log(access: Access, reads: bool, rates: bool) -> None:
    assert may_read_log(access, "manual") is reads
    assert may_rate(access, "manual") is rates
    if reads:
        require_log_reader(access, "manual")
    else:
        with pytest.raises(Forbidden) as caught:
            require_log_reader(access, "manual")
        assert caught.value.http_status == 403 and "问答记录" in caught.value.message
