"""The web UI on a phone (390 × 844, #30): the question box's placeholder fits on its line, the
listings' results come before the constraints form (folded), dates read 「2026年06月01日」 —
also in a browser whose language is English, where a native date input says 「mm/dd/yyyy」.
Screenshots: ``phone-listings``, ``phone-chat``, ``phone-policy-date`` (``$ZHIWEN_UI_ARTIFACTS``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ui_browser import PHONE, Watch, open_page, shot
from ui_steps import chat, policy, property_search, tab

# how wide the placeholder is drawn, against the room the box has for it
PLACEHOLDER_ROOM = """() => {
  const t = document.querySelector('#chat-input');
  const s = getComputedStyle(t);
  const g = document.createElement('canvas').getContext('2d');
  g.font = `${s.fontSize} ${s.fontFamily}`;
  return { text: t.placeholder, width: g.measureText(t.placeholder).width,
           room: t.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight),
           scroll: t.scrollWidth, client: t.clientWidth };
}"""


@pytest.fixture
def phone(browser: Any, ui_server: Any) -> Iterator[Any]:
    watch = Watch()
    page = open_page(browser, ui_server, watch, viewport=PHONE)
    yield page
    page.context.close()
    assert not watch.problems(), watch.problems()


@pytest.mark.parametrize("view", ["chat", "property", "policy", "advisor"])
def test_placeholder_fits_on_a_phone(phone: Any, view: str) -> None:
    if view == "chat":
        chat(phone)  # the box empties after a question: its placeholder shows under an answer
    tab(phone, view)
    got = phone.evaluate(PLACEHOLDER_ROOM)
    assert got["text"] and got["width"] <= got["room"], got
    assert got["scroll"] <= got["client"], got
    if view == "chat":
        shot(phone, "phone-chat")


def test_wide_screens_keep_the_long_placeholder(page: Any) -> None:
    assert "Shift+Enter" in page.get_by_test_id("chat-input").get_attribute("placeholder")


def test_listing_results_come_before_the_folded_form(phone: Any) -> None:
    block = property_search(phone)
    first_card = block.get_by_test_id("property-card").first.bounding_box()
    box = block.get_by_test_id("constraints-box")
    assert first_card is not None and first_card["y"] + first_card["height"] <= phone.viewport_size["height"]
    assert box.bounding_box()["y"] > first_card["y"]  # results first
    assert box.get_attribute("open") is None and not block.get_by_test_id("constraints").is_visible()
    assert "户型" in box.locator("summary").inner_text()  # the folded form still says what it holds
    shot(phone, "phone-listings")
    box.locator("summary").click()
    assert block.get_by_test_id("constraints").is_visible()
    assert block.get_by_test_id("constraints").locator("[name=price_max]").input_value() == "500"


def test_listing_form_is_open_on_a_wide_screen(page: Any) -> None:
    block = property_search(page)
    assert block.get_by_test_id("constraints-box").get_attribute("open") is not None


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_dates_read_in_chinese(browser: Any, ui_server: Any, locale: str) -> None:
    watch = Watch()
    page = open_page(browser, ui_server, watch, viewport=PHONE, locale=locale)
    try:
        tab(page, "policy")
        field = page.locator("#policy-asof")
        assert field.get_attribute("type") == "text" and field.get_attribute("placeholder") == "年/月/日"
        for typed in ("2026-06-01", "2026/6/1", "2026年6月1日", "20260601"):
            field.fill(typed)
            field.blur()
            assert field.input_value() == "2026年06月01日", typed
        assert "mm" not in page.locator("#view-policy .toolbar").inner_text().lower()
        if locale == "en-US":
            shot(page, "phone-policy-date")
        answer = policy(page, as_of=None)  # the field's 2026年06月01日 goes to the server as 2026-06-01
        assert "已到期（2025-12-31）" in answer.inner_text()
        tab(page, "calc")
        tax = page.locator("#tax-date")
        tax.fill("2025.3.7")
        tax.blur()
        assert tax.input_value() == "2025年03月07日"
        tax.fill("2025-02-30")  # not a date: said next to the field, nothing sent
        page.get_by_test_id("calc-tax-submit").click()
        assert "交易日期格式应为" in page.locator("[data-error-for=as_of]").inner_text()
    finally:
        page.context.close()
    assert not watch.problems(), watch.problems()


def test_calendar_button_fills_the_field(phone: Any) -> None:
    tab(phone, "policy")
    native = phone.locator("#view-policy input.date-native")
    assert native.get_attribute("type") == "date" and phone.locator("#view-policy .date-pick").is_visible()
    native.evaluate("(n) => { n.value = '2025-12-31'; n.dispatchEvent(new Event('change')); }")
    assert phone.locator("#policy-asof").input_value() == "2025年12月31日"
