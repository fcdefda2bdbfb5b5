"""The main flow of each tab as a step the tests share (functional tests, layout and screenshots)."""

from __future__ import annotations

from typing import Any

LOAN_QUESTION = "总价300万，首付三成，贷款30年，利率3.1%，等额本息月供多少？我月收入2万，压力大吗？"
DISCUSSION_QUESTION = "我在南宁，预算200万，首付40万，月收入1万，帮我深度分析一下"
POLICY_QUESTION = "法国人去中国免签吗"
PROPERTY_QUESTION = "500万以内的两房"
CHAT_QUESTION = "怎么配置大模型"


def tab(page: Any, name: str) -> None:
    page.get_by_test_id(f"app-tab-{name}").click()
    page.wait_for_selector(f"#view-{name}:not([hidden])")


def send(page: Any, question: str) -> None:
    page.get_by_test_id("chat-input").fill(question)
    page.get_by_test_id("chat-send").click()


def idle(page: Any, selector: str, timeout: float = 20_000) -> None:
    """Wait until the last element matching ``selector`` is no longer busy."""
    page.wait_for_function(
        """(sel) => { const all = document.querySelectorAll(sel);
                      return all.length && all[all.length - 1].dataset.busy === "false"; }""",
        arg=selector,
        timeout=timeout,
    )


def chat(page: Any, question: str = CHAT_QUESTION, kb: str = "manual") -> Any:
    tab(page, "chat")
    page.select_option("#chat-kb", kb)
    send(page, question)
    idle(page, "#chat-thread [data-testid=chat-answer]")
    return page.locator("#chat-thread [data-testid=chat-answer]").last


def property_search(page: Any, question: str = PROPERTY_QUESTION) -> Any:
    tab(page, "property")
    send(page, question)
    idle(page, "#property-thread .result-block")
    return page.locator("#property-thread .result-block").last


def policy(page: Any, question: str = POLICY_QUESTION, as_of: str | None = "2026-06-01") -> Any:
    tab(page, "policy")
    if as_of:
        page.fill("#policy-asof", as_of)
    send(page, question)
    idle(page, "#policy-thread [data-testid=chat-answer]")
    return page.locator("#policy-thread [data-testid=chat-answer]").last


def advisor(page: Any, question: str = LOAN_QUESTION, deep: bool = False) -> Any:
    tab(page, "advisor")
    toggle = page.locator("#advisor-deep")
    if toggle.is_checked() != deep:
        page.locator("label.switch").click()
    send(page, question)
    idle(page, "#advisor-thread .advisor-turn")
    return page.locator("#advisor-thread .advisor-turn").last


def loan(page: Any, price: str = "3000000", down: str = "30", years: str = "30", rate: str = "3.1") -> Any:
    tab(page, "calc")
    page.get_by_test_id("calc-loan-price").fill(price)
    page.get_by_test_id("calc-loan-down-pct").fill(down)
    page.get_by_test_id("calc-loan-years").fill(years)
    page.get_by_test_id("calc-loan-rate").fill(rate)
    page.get_by_test_id("calc-loan-submit").click()
    idle(page, "#loan-result")
    return page.locator("#loan-result")


def tax(page: Any) -> Any:
    tab(page, "calc")
    page.get_by_test_id("calc-tax-submit").click()
    idle(page, "#tax-result")
    return page.locator("#tax-result")


def inspect_kb(page: Any, name: str = "manual") -> Any:
    tab(page, "kbs")
    page.locator(f"[data-kb='{name}'] button").click()
    page.wait_for_selector("#kb-detail table.docs")
    return page.locator("#kb-detail")


def horizontal_overflow(page: Any) -> int:
    """How many pixels the page is wider than the viewport (0: no horizontal scroll)."""
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))
