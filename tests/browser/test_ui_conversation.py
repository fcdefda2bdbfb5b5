"""Conversations in Chromium: a three-turn chat whose follow-ups are understood (理解为：…), cite
the right one of three near-identical pages, and 新对话 starts over; a two-turn policy chat.

Screenshots of the conversation (desktop and phone) go to the artifacts directory as
``ui_conversation_desktop.png`` and ``ui_conversation_phone.png``.
"""

from __future__ import annotations

from typing import Any

from ui_browser import PHONE, shot
from ui_steps import horizontal_overflow, idle, send, tab

ANSWERS = "#chat-thread [data-testid=chat-answer]"

# (typed, what it is understood as (None: as typed), a fact only the physics page has)
TURNS = (
    ("北京大学物理学院是哪年成立的？", None, "2001年"),
    ("它在哪个校区？", "北京大学物理学院在哪个校区", "燕园校区"),
    ("开设了哪些课程？", "北京大学物理学院开设了哪些课程", "量子力学"),
)


def record_bodies(page: Any, path: str) -> list[dict[str, Any]]:
    """The JSON bodies the page POSTs to ``path``, in order."""
    bodies: list[dict[str, Any]] = []

    def on_request(request: Any) -> None:
        if request.method == "POST" and request.url.endswith(path):
            bodies.append(request.post_data_json)

    page.on("request", on_request)
    return bodies


def ask(page: Any, question: str, thread: str = ANSWERS) -> Any:
    """Send ``question`` and wait for its answer (a new last element of ``thread``) to finish."""
    before = page.locator(thread).count()
    send(page, question)
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length > n", arg=[thread, before])
    idle(page, thread)
    return page.locator(thread).last


def understood(page: Any, view: str) -> Any:
    return page.locator(f"#{view}-thread .msg-user").last.get_by_test_id("understood")


def test_three_turn_chat_follow_ups_and_new_conversation(page: Any) -> None:
    bodies = record_bodies(page, "/api/v1/qa")
    tab(page, "chat")
    page.select_option("#chat-kb", "depts")
    for k, (typed, meant, fact) in enumerate(TURNS):
        answer = ask(page, typed)
        assert page.locator(ANSWERS).count() == k + 1
        line = understood(page, "chat")
        if meant is None:
            assert line.count() == 0  # a standalone question is shown as typed
        else:
            assert line.inner_text().startswith("理解为：") and meant in line.inner_text()
        # the right page of three near-identical ones: cited first, and its fact is in the answer
        assert "北京大学物理学院" in answer.get_by_test_id("source").first.inner_text()
        assert fact in answer.locator(".md").inner_text()
        # the history sent: the earlier turns, question then answer, oldest first
        history = bodies[-1].get("history", [])
        assert [m["role"] for m in history] == ["user", "assistant"] * k
        assert [m["content"] for m in history[::2]] == [t[0] for t in TURNS[:k]]
        assert all(m["content"] for m in history[1::2])

    # reads well on a desktop and on a phone
    shot(page, "ui_conversation_desktop")
    page.set_viewport_size(PHONE)
    assert horizontal_overflow(page) == 0
    assert understood(page, "chat").is_visible()
    shot(page, "ui_conversation_phone")

    # the conversation survives a reload: the next follow-up is still understood
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#chat-thread [data-testid=understood]").count() == 2

    # 新对话 (reachable from the keyboard) clears the thread and the history
    new = page.get_by_test_id("chat-new")
    assert new.inner_text().strip() == "新对话"
    new.focus()
    page.keyboard.press("Enter")
    assert page.locator(ANSWERS).count() == 0
    assert page.evaluate("localStorage.getItem('zhiwen.chat.history.v1')") is None
    answer = ask(page, "开设了哪些课程？")
    assert "history" not in bodies[-1] or bodies[-1]["history"] == []
    assert understood(page, "chat").count() == 0
    assert answer.get_by_test_id("source").count() >= 1


def test_policy_follow_up_keeps_the_country(page: Any) -> None:
    bodies = record_bodies(page, "/api/v1/policy/ask")
    tab(page, "policy")
    page.fill("#policy-asof", "2026-06-01")
    thread = "#policy-thread [data-testid=chat-answer]"
    ask(page, "法国人去中国免签吗", thread)
    assert understood(page, "policy").count() == 0
    answer = ask(page, "需要什么材料？", thread)
    assert "法国需要什么材料" in understood(page, "policy").inner_text()
    assert [m["content"] for m in bodies[-1]["history"][::2]] == ["法国人去中国免签吗"]
    assert "法国" in answer.locator(".md").inner_text()
    # 新对话: the follow-up is asked on its own again
    page.get_by_test_id("policy-new").click()
    assert page.locator(thread).count() == 0
    ask(page, "需要什么材料？", thread)
    assert "history" not in bodies[-1]
    assert understood(page, "policy").count() == 0


def test_listings_refinement_shows_the_merged_constraints(page: Any) -> None:
    bodies = record_bodies(page, "/ask")
    tab(page, "property")
    blocks = "#property-thread .result-block"
    first = ask(page, "500万以内的两房", blocks)
    assert first.get_by_test_id("merged-constraints").count() == 0
    second = ask(page, "要南北通透的", blocks)
    assert [m["role"] for m in bodies[-1]["history"]] == ["user", "assistant"]
    assert "南北通透" in understood(page, "property").inner_text()
    merged = second.get_by_test_id("merged-constraints")
    assert "500万" in merged.inner_text() and "南北通透" in merged.inner_text()
    assert "新增：" in merged.inner_text()
    # a search from the edited form states every constraint: it starts the conversation again
    second.locator("form.constraints button[type=submit]").click()
    idle(page, blocks)
    assert page.locator(blocks).count() == 3 and "history" not in bodies[-1]
    page.get_by_test_id("property-new").click()
    assert page.locator(blocks).count() == 0


def test_advisor_echoes_the_facts_and_new_conversation_starts_a_session(page: Any) -> None:
    bodies = record_bodies(page, "/api/v1/chat")
    tab(page, "advisor")
    turns = "#advisor-thread .advisor-turn"
    ask(page, "总价300万，首付三成，贷款30年，利率3.1%，等额本息月供多少？", turns)
    assert "按总价300万元" in understood(page, "advisor").inner_text()
    second = ask(page, "年限改成25年呢？", turns)
    line = understood(page, "advisor").inner_text()
    assert line.startswith("理解为：") and "贷款25年" in line and "总价300万元" in line
    assert "10,068.01" in second.inner_text()
    session = bodies[-1]["session_id"]
    assert bodies[0]["session_id"] == session and len(bodies[-1]["history"]) == 2
    page.get_by_test_id("advisor-new").click()
    assert page.locator(turns).count() == 0
    ask(page, "月供多少？", turns)
    assert bodies[-1]["session_id"] != session and "history" not in bodies[-1]
