"""Every tab at desktop and 390 px phone width, light and dark: no horizontal scroll, no page
errors, screenshots saved as artifacts (``$ZHIWEN_UI_ARTIFACTS``, see conftest) to look at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ui_browser import DESKTOP, PHONE, Watch, open_page, shot
from ui_steps import advisor, chat, horizontal_overflow, inspect_kb, loan, policy, property_search, tab, tax


def _calc(page: Any) -> None:
    loan(page)
    tax(page)


FLOWS: dict[str, Callable[[Any], Any]] = {
    "chat": chat,
    "property": property_search,
    "policy": policy,
    "advisor": advisor,
    "calc": _calc,
    "kbs": inspect_kb,
}


@pytest.mark.parametrize(
    ("size", "scheme"),
    [("desktop", "light"), ("phone", "light"), ("phone", "dark"), ("desktop", "dark")],
)
def test_every_tab_fits_and_is_captured(browser: Any, ui_server: Any, size: str, scheme: str) -> None:
    watch = Watch()
    viewport = PHONE if size == "phone" else DESKTOP
    page = open_page(browser, ui_server, watch, viewport=viewport, scheme=scheme)
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    dark = sum(int(x) for x in background[background.index("(") + 1 : -1].split(",")[:3]) < 3 * 60
    assert dark == (scheme == "dark"), background
    try:
        if size == "phone":  # all six tabs fit the phone's width without scrolling the tab bar
            for name in FLOWS:
                box = page.get_by_test_id(f"app-tab-{name}").bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        for name, flow in FLOWS.items():
            flow(page)
            assert horizontal_overflow(page) <= 0, f"{name}: wider than {viewport['width']} px"
            shot(page, f"{size}-{scheme}-{name}")
    finally:
        page.context.close()
    assert not watch.problems(), watch.problems()


def test_theme_toggle_overrides_the_system(page: Any) -> None:
    toggle = page.locator("#theme-toggle")
    assert "跟随系统" in toggle.inner_text()
    toggle.click()
    assert page.evaluate("() => document.documentElement.dataset.theme") == "light"
    toggle.click()
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    page.reload()  # remembered, and applied before the first paint by theme.js
    page.wait_for_selector("body[data-ready=true]")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    assert "深色" in page.locator("#theme-toggle").inner_text()
    tab(page, "calc")
    assert page.get_by_test_id("calc-loan-submit").is_visible()
