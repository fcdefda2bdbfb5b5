"""The question store contract, the same cases on SQLite and PostgreSQL."""

from __future__ import annotations

from qlog_records import DAY, T0, rec

from zhiwen.faq.normalize import normalise_question
from zhiwen.questionlog import Feedback, QuestionStore, SourceRef, Span


def test_a_record_comes_back_as_written(store: QuestionStore) -> None:
    q = rec(
        standalone="知问怎么创建知识库？",
        faq_id="faq-1",
        faq_score=0.97,
        answer_type="faq",
        answerable=None,
        fallback=None,
        llm_calls=2,
        prompt_tokens=300,
        completion_tokens=40,
        session_id="s1",
        sources=(SourceRef("a", "甲", 0.5, "manual"), SourceRef("b", "", None, None)),
    )
    store.add([q])
    assert store.find(q.answer_id) == q
    assert store.find("0000000000000000") is None


def test_an_id_written_twice_is_kept_once(store: QuestionStore) -> None:
    q = rec()
    store.add([q])
    store.add([q, rec()])
    assert store.questions("manual", Span(), "all", limit=10, offset=0).total == 2


def test_nul_characters_do_not_cost_the_batch(store: QuestionStore) -> None:
    q = rec(question="怎么\x00建库", sources=(SourceRef("a\x00", "标\x00题", 0.1),))
    store.add([q, rec()])
    found = store.find(q.answer_id)
    assert found is not None and found.question == "怎么建库" and found.sources[0].title == "标题"


def test_feedback_is_one_per_caller_and_changeable(store: QuestionStore) -> None:
    q = rec()
    store.add([q])
    store.set_feedback(Feedback(q.answer_id, "manual", "down", "fp-1", "outdated", "旧了", at=T0 + 1))
    store.set_feedback(Feedback(q.answer_id, "manual", "up", "fp-2", at=T0 + 2))
    store.set_feedback(Feedback(q.answer_id, "manual", "down", "fp-1", "off_topic", None, at=T0 + 3))
    got = store.feedback_of([q.answer_id])
    assert [(f.caller, f.rating, f.reason, f.comment) for f in got] == [
        ("fp-2", "up", None, None),
        ("fp-1", "down", "off_topic", None),
    ]


def test_lists_by_status_window_and_app_newest_first(store: QuestionStore) -> None:
    old = rec(at=T0 - 3 * DAY)
    refused = rec(answer_type="refused", at=T0 + 1)
    timeout = rec(fallback="timeout", at=T0 + 2)
    disliked = rec(at=T0 + 3, app="policy")
    fine = rec(at=T0 + 4)
    store.add([old, refused, timeout, disliked, fine])
    store.set_feedback(Feedback(disliked.answer_id, "manual", "down", "fp-1", "outdated"))
    store.set_feedback(Feedback(fine.answer_id, "manual", "up", "fp-1"))

    def ids(status: str, span: Span = Span(), **kw: int) -> list[str]:
        page = store.questions("manual", span, status, limit=kw.get("limit", 50), offset=kw.get("offset", 0))  # type: ignore[arg-type]
        return [item.record.answer_id for item in page.items]

    assert ids("all") == [
        fine.answer_id,
        disliked.answer_id,
        timeout.answer_id,
        refused.answer_id,
        old.answer_id,
    ]
    assert ids("unanswered") == [timeout.answer_id, refused.answer_id]
    assert ids("disliked") == [disliked.answer_id]
    assert ids("all", Span(start=T0)) == [
        fine.answer_id,
        disliked.answer_id,
        timeout.answer_id,
        refused.answer_id,
    ]
    assert ids("all", Span(end=T0)) == [old.answer_id]
    assert ids("all", Span(app="policy")) == [disliked.answer_id]
    assert ids("all", limit=2, offset=1) == [disliked.answer_id, timeout.answer_id]
    page = store.questions("manual", Span(), "all", limit=1, offset=0)
    assert page.total == 5 and page.items[0].up == 1 and page.items[0].down == 0
    assert store.questions("other", Span(), "all", limit=10, offset=0).total == 0


def test_records_are_read_in_pages_oldest_first(store: QuestionStore) -> None:
    same_time = [rec(at=T0 + 5) for _ in range(4)]  # ties on `at`: the id breaks them
    written = [rec(at=T0 + i) for i in range(5)] + same_time
    store.add(written)
    got = list(store.records("manual", Span(), page=3))
    assert [q.answer_id for q in got] == [
        q.answer_id for q in sorted(written, key=lambda q: (q.at, q.answer_id))
    ]
    assert list(store.records("manual", Span(start=T0 + 5), page=2)) == sorted(
        same_time, key=lambda q: q.answer_id
    )


def test_stat_rows_carry_their_ratings(store: QuestionStore) -> None:
    a, b = rec(llm_calls=1, prompt_tokens=10, completion_tokens=3), rec(answer_type="refused")
    store.add([a, b])
    store.set_feedback(Feedback(a.answer_id, "manual", "up", "x"))
    store.set_feedback(Feedback(a.answer_id, "manual", "up", "y"))
    store.set_feedback(Feedback(b.answer_id, "manual", "down", "x", "off_topic"))
    rows = {r.at: r for r in store.stat_rows("manual", Span(), page=1)}
    ra, rb = rows[a.at], rows[b.at]
    assert (ra.up, ra.down, ra.unanswered, ra.llm_calls, ra.prompt_tokens, ra.completion_tokens) == (
        2,
        0,
        False,
        1,
        10,
        3,
    )
    assert (rb.up, rb.down, rb.unanswered, rb.answer_type) == (0, 1, True, "refused")


def test_phrasings_count_the_same_question_however_written(store: QuestionStore) -> None:
    store.add(
        [
            rec(question="怎么创建知识库？"),
            rec(question="怎么创建知识库呢"),
            rec(question="怎麼創建知識庫?", answer_type="refused"),
            rec(question="那呢？", standalone="怎么创建知识库"),  # a follow-up: its standalone counts
            rec(question="支持哪些格式"),
        ]
    )
    top = store.phrasings("manual", Span(), limit=10)
    expected = [(normalise_question("怎么创建知识库"), 4, 1), ("支持哪些格式", 1, 0)]
    assert [(p.normal, p.count, p.unanswered) for p in top] == expected
    assert store.phrasings("manual", Span(), limit=1)[0].count == 4


def test_purge_takes_the_oldest_in_batches_with_their_feedback(store: QuestionStore) -> None:
    old = [rec(at=T0 - 10 * DAY + i) for i in range(5)]
    new = rec(at=T0)
    store.add([*old, new])
    store.set_feedback(Feedback(old[0].answer_id, "manual", "down", "x"))
    assert store.purge(T0 - DAY, limit=3) == 3
    assert store.purge(T0 - DAY, limit=3) == 2
    assert store.purge(T0 - DAY, limit=3) == 0
    assert [q.answer_id for q in store.records("manual", Span())] == [new.answer_id]
    assert store.feedback_of([old[0].answer_id]) == []


def test_delete_kb_leaves_the_others(store: QuestionStore) -> None:
    mine, theirs = rec(kb="manual"), rec(kb="recipes")
    store.add([mine, theirs])
    store.set_feedback(Feedback(mine.answer_id, "manual", "up", "x"))
    assert store.delete_kb("manual") == 1
    assert store.find(mine.answer_id) is None and store.feedback_of([mine.answer_id]) == []
    assert store.find(theirs.answer_id) == theirs


def test_a_reopened_store_reads_what_was_written(open_store) -> None:  # type: ignore[no-untyped-def]
    first = open_store()
    q = rec()
    first.add([q])
    first.close()
    assert open_store().find(q.answer_id) == q
