"""Browser plumbing of the UI tests: where Chromium is, where screenshots go, a watched page."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ui_fixtures import Server

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str | None:
    wanted = os.environ.get("ZHIWEN_CHROMIUM")
    if wanted:
        return wanted if Path(wanted).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def artifacts_dir() -> Path:
    path = Path(
        os.environ.get("ZHIWEN_UI_ARTIFACTS") or Path(tempfile.gettempdir()) / "artifacts" / "zhiwen-ui"
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Watch:
    """Page errors and console errors seen while a test ran."""

    errors: list[str] = field(default_factory=list)
    allow_http_errors: bool = False

    def problems(self) -> list[str]:
        if not self.allow_http_errors:
            return list(self.errors)
        return [e for e in self.errors if "Failed to load resource" not in e]


def open_page(
    browser: Any,
    server: Server,
    watch: Watch,
    *,
    viewport: dict[str, int],
    scheme: str = "light",
    locale: str = "zh-CN",
) -> Any:
    """A page on ``server`` in a fresh context (``locale``: the browser's language)."""
    context = browser.new_context(
        viewport=viewport, color_scheme=scheme, locale=locale, timezone_id="Asia/Shanghai"
    )
    context.set_default_timeout(15_000)
    if server.api_key:  # as if entered in the key dialog in this tab
        context.add_init_script(f"sessionStorage.setItem('zhiwen.api.key', {json.dumps(server.api_key)})")
    page = context.new_page()
    page.on("pageerror", lambda exc: watch.errors.append(f"pageerror: {exc}"))

    def on_console(msg: Any) -> None:
        if msg.type == "error":
            watch.errors.append(f"console: {msg.text}")

    page.on("console", on_console)
    page.goto(server.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    return page


IN_FLOW = (
    "() => { for (const s of ['.composer', '.tabs']) document.querySelector(s).style.position = 'static'; }"
)


def shot(page: Any, name: str) -> Path:
    """A full-page screenshot ``<artifacts>/<name>.png``.

    The sticky tab bar and question box would sit mid-page in a full-page shot, so they are put in
    the flow first, through the CSSOM: the page's CSP refuses the <style> that
    ``screenshot(style=…)`` would inject.
    """
    page.evaluate(IN_FLOW)
    path = artifacts_dir() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    return path
