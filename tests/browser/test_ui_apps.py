"""房源, 政策问答 and 购房顾问 in Chromium against the real app routes."""

from __future__ import annotations

import re
from typing import Any

from ui_browser import shot
from ui_steps import DISCUSSION_QUESTION, advisor, idle, policy, property_search


def test_property_cards_and_editable_constraints(page: Any) -> None:
    block = property_search(page)
    cards = block.get_by_test_id("property-card")
    assert cards.count() >= 3
    for k in range(cards.count()):
        text = cards.nth(k).inner_text()
        assert re.search(r"\d+\s*万", text) and "㎡" in text and "室" in text
        assert re.search(r"\d+%\s*匹配", text) and "价格符合预算" in text
        price = int(cards.nth(k).locator(".price strong").inner_text().replace(",", ""))
        assert price <= 500
    panel = block.get_by_test_id("constraints")
    assert panel.locator("[name=price_max]").input_value() == "500"
    assert panel.locator("[name=rooms]").input_value() == "2"
    # edit the constraints and search again: the new question carries them, the new panel shows them
    panel.locator("[name=price_max]").fill("350")
    panel.locator("[name=place]").fill("浦东新区")
    panel.get_by_role("button", name="按条件重新搜索").click()
    page.wait_for_function("() => document.querySelectorAll('#property-thread .result-block').length === 2")
    idle(page, "#property-thread .result-block")
    again = page.locator("#property-thread .result-block").last
    assert "浦东新区，350万以内，2室" in page.locator("#property-thread .msg-user").last.inner_text()
    assert again.get_by_test_id("constraints").locator("[name=price_max]").input_value() == "350"
    assert again.get_by_test_id("constraints").locator("[name=place]").input_value() == "浦东新区"
    assert again.get_by_test_id("property-card").count() >= 1
    assert "浦东" in again.get_by_test_id("property-card").first.inner_text()


def test_policy_answer_intent_rewrite_and_source_groups(page: Any) -> None:
    answer = policy(page)  # as_of 2026-06-01: France's visa-free policy (ends 2025-12-31) is expired
    assert "法国" in answer.locator(".md").inner_text()
    meta = answer.get_by_test_id("policy-meta")
    assert "免签入境" in meta.locator("[data-field=识别意图]").inner_text()
    assert "法国" in meta.locator("[data-field=改写问题]").inner_text()
    specialist = answer.locator("[data-group=specialist]")
    general = answer.locator("[data-group=general]")
    assert specialist.get_by_test_id("source").count() >= 1 and general.get_by_test_id("source").count() >= 1
    assert "policy_visa" in specialist.get_by_test_id("source").first.inner_text()
    assert re.search(r"得分 \d\.\d{3}", general.get_by_test_id("source").first.inner_text())
    expired = specialist.locator(".source.expired")
    assert expired.count() >= 1 and "已到期（2025-12-31）" in expired.first.inner_text()
    # citations keep the answer's numbering across the two groups, and open their text
    general.get_by_test_id("source").first.click()
    page.wait_for_selector("#source-dialog pre.chunk-text")
    assert "第" in page.locator("#source-dialog pre.chunk-text").first.inner_text()
    page.locator("#source-dialog-close").click()


def test_advisor_role_cards_tools_and_session(page: Any) -> None:
    turn = advisor(page)
    cards = turn.get_by_test_id("role-card")
    assert cards.count() >= 2
    finance = turn.locator("[data-testid=role-card][data-role=financial_advisor]")
    assert "财务顾问" in finance.locator("header").inner_text()
    assert finance.locator(".role-icon").inner_text().strip()  # the emoji, or 财 without an emoji font
    assert "8,967.34" in finance.locator(".md").inner_text()
    monthly = finance.locator("[data-tool=calc_loan] tr[data-key=monthly_payment] td")
    assert monthly.inner_text() == "8,967.34"
    assert "压力中等" in finance.locator("[data-tool=assess_pressure]").inner_text()
    # the session continues: the follow-up only changes the rate, the price comes from before
    turn = advisor(page, "如果利率是3.5%呢，月供多少？")
    follow = turn.locator("[data-testid=role-card][data-role=financial_advisor]")
    assert "9,429.94" in follow.locator(".md").inner_text()


def test_advisor_discussion_mode_shows_the_negotiation(page: Any) -> None:
    turn = advisor(page, DISCUSSION_QUESTION, deep=True)
    assert turn.get_attribute("data-mode") == "discussion"
    messages = turn.locator(".discussion > li")
    assert messages.count() >= 3
    first = messages.first.inner_text()
    assert "第 1 轮" in first and "→" in first
    assert turn.locator(".discussion").inner_text().count("财务顾问") >= 1
    summary = turn.locator("[data-testid=role-card][data-role=home_advisor]")
    assert "讨论共识" in summary.inner_text()
    shot(page, "desktop-light-advisor-discussion")
