"""Every tab names the command that sets up its app while its KBs are missing (#30): a notice
before the first question, and the server's 404 in the answer when asked anyway. Against a
``zhiwen serve`` over an empty home; over the full home no tab shows a notice."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ui_browser import DESKTOP, PHONE, Watch, open_page, shot
from ui_fixtures import Server
from ui_steps import idle, send, tab

SETUP = "zhiwen {} setup ../shared/data"
# tab → the apps whose setup it names
TABS = {"chat": ("recipes",), "property": ("listings",), "policy": ("policy",), "advisor": ("advisor",)}


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``zhiwen serve`` before any setup: no KB at all."""
    server = Server(tmp_path_factory.mktemp("bare_home")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def bare_page(browser: Any, bare_server: Server) -> Iterator[Any]:
    watch = Watch(allow_http_errors=True)  # the 404s asked for below are the point
    page = open_page(browser, bare_server, watch, viewport=DESKTOP)
    yield page
    page.context.close()
    assert not watch.problems(), watch.problems()


def notice(page: Any, view: str) -> Any:
    return page.locator(f"#view-{view} > [data-testid=setup-hint]")


@pytest.mark.parametrize("view", list(TABS))
def test_each_tab_names_its_setup_before_any_question(bare_page: Any, view: str) -> None:
    tab(bare_page, view)
    box = notice(bare_page, view)
    assert box.is_visible()
    for name in TABS[view]:
        assert SETUP.format(name) in box.locator(f"[data-app={name}] code").inner_text()
    if view == "chat":  # no KB at all: how to make one
        assert "zhiwen index --kb 名称 <目录>" in box.inner_text()


def test_policy_answer_names_the_setup(bare_page: Any) -> None:
    tab(bare_page, "policy")
    send(bare_page, "法国人去中国免签吗")
    idle(bare_page, "#policy-thread [data-testid=chat-answer]")
    error = bare_page.locator("#policy-thread [data-testid=chat-answer] [data-testid=error]")
    assert f"请先运行 {SETUP.format('policy')}（错误码 3004）" in error.inner_text()


def test_listings_answer_names_the_setup(bare_page: Any) -> None:
    tab(bare_page, "property")
    send(bare_page, "浦东 500万以内两房")
    idle(bare_page, "#property-thread .result-block")
    error = bare_page.locator("#property-thread [data-testid=error]")
    assert f"知识库 listings 尚未建立：请先运行 {SETUP.format('listings')}" in error.inner_text()


def test_recipes_in_the_chat_tab_names_the_setup(bare_page: Any) -> None:
    tab(bare_page, "chat")
    bare_page.evaluate("document.querySelector('#chat-kb').add(new Option('recipes', 'recipes'))")
    bare_page.select_option("#chat-kb", "recipes")
    send(bare_page, "番茄炒蛋怎么做")
    idle(bare_page, "#chat-thread [data-testid=chat-answer]")
    error = bare_page.locator("#chat-thread [data-testid=chat-answer] [data-testid=error]")
    assert f"请先运行 {SETUP.format('recipes')}" in error.inner_text()


def test_advisor_answer_names_the_setup_where_a_search_failed(bare_page: Any) -> None:
    tab(bare_page, "advisor")
    send(bare_page, "总价300万，契税多少？")
    idle(bare_page, "#advisor-thread .advisor-turn")
    turn = bare_page.locator("#advisor-thread .advisor-turn").last
    assert f"请先运行 {SETUP.format('advisor')}" in turn.inner_text()


def test_phone_shows_the_policy_notice(browser: Any, bare_server: Server) -> None:
    watch = Watch()
    page = open_page(browser, bare_server, watch, viewport=PHONE)
    try:
        tab(page, "policy")
        assert notice(page, "policy").is_visible()
        assert (
            page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        )
        shot(page, "phone-policy-setup-hint")
    finally:
        page.context.close()
    assert not watch.problems(), watch.problems()


def test_no_notice_once_every_app_is_set_up(page: Any) -> None:
    for view in TABS:
        tab(page, view)
        assert notice(page, view).count() == 0, view


def test_copy_button_copies_the_command(bare_page: Any) -> None:
    bare_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab(bare_page, "policy")
    notice(bare_page, "policy").get_by_role("button", name="复制").click()
    assert bare_page.evaluate("navigator.clipboard.readText()") == SETUP.format("policy")
