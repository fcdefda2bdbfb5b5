"""Browser tests of the web UI: a real ``zhiwen serve`` over small real KBs, driven in Chromium.

Needs playwright's Python package and a Chromium binary (Debian's ``chromium``; another one via
``ZHIWEN_CHROMIUM``); the tests are skipped with the reason when either is missing, or when
``../shared/data`` is absent. Screenshots go to ``$ZHIWEN_UI_ARTIFACTS`` (default
``<tmp>/artifacts/zhiwen-ui``).

Every page is watched: an uncaught page error or a console error fails the test, except the
browser's own "Failed to load resource" line for a 4xx a test provokes on purpose
(``watch.allow_http_errors = True``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from ui_browser import DESKTOP, Watch, chromium_path, open_page
from ui_fixtures import Server, build_home, missing_data


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    reason = missing_data()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("ui_home")
    server = Server(home).launch()  # imports while the KBs are built
    try:
        build_home(home)
        server.wait()
        yield server
    finally:
        server.stop()


# Module scope, not session: sync_playwright keeps its event loop registered as running on the
# main thread until it stops, which would break every later test that calls asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip(
            "no Chromium found (bash scripts/test.sh --system, apt-get install chromium fonts-noto-cjk, "
            "or set ZHIWEN_CHROMIUM)"
        )
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=args)
        yield b
        b.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def page(browser: Any, ui_server: Server, watch: Watch) -> Iterator[Any]:
    """A fresh desktop page (its own context: empty localStorage) that must log no errors."""
    p = open_page(browser, ui_server, watch, viewport=DESKTOP)
    yield p
    p.context.close()
    assert not watch.problems(), watch.problems()
