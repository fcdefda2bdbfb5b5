"""The API key in Chromium (#29): a server with keys asks for one, keeps it for the tab only, and
sends it with every call (JSON, the answer's stream, uploads).

Its own small server (the sample KB ``manual`` only) with a scoped key, no shared data needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_browser import DESKTOP, Watch
from ui_fixtures import Server, server_env
from ui_steps import chat

KEY = "sk-ui-manual"


class KeyedServer(Server):
    """``zhiwen serve`` whose only key may read and write ``manual``; pages enter no key."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.api_key = None

    def launch(self) -> Server:
        import subprocess
        import sys

        self.home.mkdir(parents=True, exist_ok=True)
        env = {**server_env(self.home), "ZHIWEN_API__KEYS": json.dumps([{"key": KEY, "kbs": ["manual"]}])}
        cmd = [
            sys.executable,
            "-m",
            "zhiwen.cli.main",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.home, env=env, stdout=out, stderr=subprocess.STDOUT)
        return self


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.ingest import load_markdown, sample_kb_path
    from zhiwen.kb import close_all, open_kb

    home = tmp_path_factory.mktemp("ui_key_home")
    settings = Settings(
        home=home, embedding={"provider": "hash"}, llm=LLMSettings(base_url=None), _env_file=None
    )
    kb = open_kb("manual", settings=settings, create=True, embedder="hash")
    kb.index_corpus(load_markdown(sample_kb_path()), progress=False)
    close_all()
    server = KeyedServer(home).start()
    yield server
    server.stop()


def _new_page(browser: Any, server: Server, watch: Watch) -> Any:
    context = browser.new_context(viewport=DESKTOP, locale="zh-CN")
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.on("pageerror", lambda exc: watch.errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: msg.type == "error" and watch.errors.append(f"console: {msg.text}"))
    page.goto(server.url + "/")
    return page


def _enter_key(page: Any, key: str) -> None:
    dialog = page.get_by_test_id("key-dialog")
    dialog.wait_for(state="visible")
    page.get_by_test_id("key-input").fill(key)
    page.get_by_test_id("key-submit").click()


def test_key_asked_kept_for_the_tab_and_sent_everywhere(
    browser: Any, keyed_server: Server, watch: Watch
) -> None:
    watch.allow_http_errors = True  # the 401s that open the dialog
    page = _new_page(browser, keyed_server, watch)
    # no key yet: the first calls answer 401 and the dialog says why, in Chinese
    page.get_by_test_id("key-dialog").wait_for(state="visible")
    assert "未提供 API Key" in page.locator("#key-dialog-message").inner_text()
    _enter_key(page, "sk-wrong")
    page.wait_for_function("() => document.querySelector('#key-dialog-message').textContent.includes('错误')")
    _enter_key(page, KEY)
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#boot-error").inner_text().strip() == ""
    assert page.evaluate("() => sessionStorage.getItem('zhiwen.api.key')") == KEY
    assert page.evaluate("() => localStorage.getItem('zhiwen.api.key')") is None  # never beyond the tab
    # the streamed answer carries the key too
    answer = chat(page, "怎么创建知识库")
    assert answer.inner_text().strip()
    assert not page.locator("#chat-thread [data-testid=error]").count()
    # a reload in the same tab keeps it: no dialog
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert not page.get_by_test_id("key-dialog").is_visible()
    page.context.close()
    # another tab of a fresh session has none and asks again
    other = _new_page(browser, keyed_server, watch)
    other.get_by_test_id("key-dialog").wait_for(state="visible")
    other.context.close()
    assert not watch.problems(), watch.problems()


def test_cancelled_dialog_shows_the_refusal(browser: Any, keyed_server: Server, watch: Watch) -> None:
    watch.allow_http_errors = True
    page = _new_page(browser, keyed_server, watch)
    page.get_by_test_id("key-dialog").wait_for(state="visible")
    page.locator("#key-cancel").click()
    page.wait_for_selector("body[data-ready=true]")
    assert "未授权" in page.locator("#boot-error").inner_text()
    page.context.close()
    assert not watch.problems(), watch.problems()
