"""Under every answer (#36, #37): 👍/👎 with a reason, the answer id, the 「FAQ」 badge,
「您是不是想问：」 suggestions that ask themselves, a result table; and the whole loop of #37 — ask,
👎 with a reason, find it under 提问记录, write the right answer (设为 FAQ), ask a paraphrase, get
that answer word for word with the FAQ badge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from ui_fixtures import Server
from ui_owner import ask_chat, curated_kb, need_routes, open_owner
from ui_steps import advisor, idle, policy, property_search, tab

KB = "curated_answers"
HOSTILE = '<img src=x onerror="window.__pwned=1">'

# a done event as the answer path sends it (INTERFACES.md): the fields the UI draws
CANNED_DONE = {
    "type": "done",
    "llm_used": False,
    "extractive_reason": "no_llm",
    "answer_id": "0abcdefghjkmnpqr",
    "answer_type": "faq",
    "faq": {"question": f"借书能借多久？{HOSTILE}", "score": 0.97, "entry_id": "faq1"},
    "suggestions": ["图书馆几点开门？", HOSTILE],
    "table": {
        "title": "2023年四川省录取分数线",
        "source": "2023-四川省.html",
        "columns": ["专业名称", HOSTILE],
        "types": ["text", "int"],
        "rows": [["法学", 648], ["金融学类", 610]],
        "total_rows": 2,
        "highlight": [[1, 1]],
    },
}


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events)


@pytest.fixture(scope="module")
def kb(ui_server: Server) -> Iterator[str]:
    yield curated_kb(ui_server, KB)


def test_answer_meta_is_drawn_as_text_and_feedback_is_sent(page: Any, kb: str) -> None:
    """The UI alone, over a canned stream: badge, suggestions, table, 👎 with a reason."""
    asked: list[str] = []
    rated: list[dict[str, Any]] = []

    def qa(route: Any) -> None:
        asked.append(json.loads(route.request.post_data)["question"])
        body = sse({"type": "sources", "sources": []}, {"type": "delta", "text": "借期为30天。"}, CANNED_DONE)
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=body)

    def feedback(route: Any) -> None:
        rated.append(json.loads(route.request.post_data))
        route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"code": 0, "message": "ok", "data": rated[-1]}),
        )

    page.route("**/api/v1/qa", qa)
    page.route("**/api/v1/feedback", feedback)
    answer = ask_chat(page, "借书能借多久", kb)
    badge = answer.get_by_test_id("faq-badge")
    assert "FAQ" in badge.inner_text() and HOSTILE in badge.inner_text()
    assert answer.get_by_test_id("answer-id").inner_text() == "回答编号：0abcdefghjkmnpqr"
    table = answer.get_by_test_id("answer-table")
    assert table.locator("th").nth(1).inner_text() == HOSTILE
    assert table.locator("td.hl").inner_text() == "610"
    assert page.evaluate("window.__pwned") is None and page.locator("img[src=x]").count() == 0

    answer.get_by_test_id("thumb-down").click()
    answer.get_by_test_id("reason-outdated").check()
    answer.get_by_test_id("feedback-comment").fill("借期已改为60天")
    answer.get_by_test_id("feedback-submit").click()
    page.wait_for_selector("#chat-thread [data-testid=feedback][data-rated=down]")
    assert rated == [
        {"answer_id": "0abcdefghjkmnpqr", "rating": "down", "reason": "outdated", "comment": "借期已改为60天"}
    ]

    answer.get_by_test_id("suggestion").first.click()
    page.wait_for_function(
        "() => document.querySelectorAll('#chat-thread [data-testid=chat-answer]').length === 2"
    )
    assert asked == ["借书能借多久", "图书馆几点开门？"]


def test_a_table_answer_draws_its_table(page: Any, kb: str) -> None:
    answer = ask_chat(page, "2023年四川省物理类金融学类最低分是多少？", kb)
    table = answer.get_by_test_id("answer-table")
    assert "专业名称" in table.locator("thead").inner_text()
    assert table.locator("td.hl").first.inner_text() == "610"
    # an aggregate is answered by SQL, shown folded under its result
    counted = ask_chat(page, "2023年四川省物理类哪个专业最低分最高？", kb)
    assert "MAX(" in (counted.locator(".table-sql").text_content() or "")


def test_every_app_puts_feedback_under_its_answers(page: Any, ui_server: Server) -> None:
    need_routes(ui_server, "/api/v1/feedback")
    answers = {
        "通用问答": ask_chat(page, "怎么配置大模型", "manual"),
        "菜谱": ask_chat(page, "凉拌黄瓜怎么做", "recipes"),
        "政策问答": policy(page),
        "房源": property_search(page),
        "购房顾问": advisor(page),
    }
    for name, node in answers.items():
        assert node.get_by_test_id("thumb-up").count() == 1, name
        assert node.get_by_test_id("answer-id").inner_text().startswith("回答编号："), name
    tab(page, "chat")
    first = page.locator("#chat-thread [data-testid=chat-answer]").first
    first.get_by_test_id("thumb-up").click()
    page.wait_for_selector("#chat-thread [data-testid=feedback][data-rated=up]")


def test_a_disliked_answer_becomes_an_faq_answered_word_for_word(
    page: Any, ui_server: Server, kb: str
) -> None:
    need_routes(
        ui_server,
        "/api/v1/feedback",
        "/api/v1/kbs/{kb}/questions",
        "/api/v1/kbs/{kb}/questions/{answer_id}/faq",
    )
    question = "东湖图书馆可以带宠物进去吗？"
    right = "东湖图书馆禁止携带宠物入馆，导盲犬除外。"
    first = ask_chat(page, question, kb)
    assert right not in first.inner_text()
    first.get_by_test_id("thumb-down").click()
    first.get_by_test_id("reason-off_topic").check()
    first.get_by_test_id("feedback-submit").click()
    page.wait_for_selector("#chat-thread [data-testid=feedback][data-rated=down]")

    panel = open_owner(page, kb, "questions")
    panel.get_by_test_id("questions-status").select_option("disliked")
    item = panel.locator("[data-testid=question]", has_text=question).first
    item.wait_for()
    assert "答非所问" in item.get_by_test_id("question-reason").inner_text()
    item.get_by_test_id("to-faq").click()
    item.get_by_test_id("to-faq-answer").fill(right)
    item.get_by_test_id("to-faq-submit").click()
    item.get_by_test_id("to-faq-done").wait_for()

    # a paraphrase the hash embedder of the tests matches (punctuation only: real embedders go
    # further), then a near miss, whose 「您是不是想问」 asks the entry's question
    page.get_by_test_id("app-tab-chat").click()
    page.get_by_test_id("chat-new").click()  # asked on its own, not as a follow-up
    again = ask_chat(page, "东湖图书馆，可以带宠物进去吗", kb)
    assert again.locator(".md").inner_text().strip() == right
    assert again.get_attribute("data-answer-type") == "faq"
    assert question in again.get_by_test_id("faq-badge").inner_text()
    near = ask_chat(page, "请问东湖图书馆可以带宠物进去吗？", kb)
    assert near.get_attribute("data-answer-type") != "faq"
    near.get_by_test_id("suggestion").filter(has_text=question).click()
    page.wait_for_function(
        "() => document.querySelectorAll('#chat-thread [data-testid=chat-answer]').length === 3"
    )
    idle(page, "#chat-thread [data-testid=chat-answer]")
    last = page.locator("#chat-thread [data-testid=chat-answer]").last
    assert last.locator(".md").inner_text().strip() == right
