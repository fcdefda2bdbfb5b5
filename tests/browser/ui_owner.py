"""A KB of their own for the tests that change one (the owner's area, feedback, FAQ), made through
the running server's home, and the steps those tests share.

:func:`curated_kb` indexes two made-up documents — a library's rules (Markdown) and one page of an
admission table (HTML: a table answer) — into a fresh KB. A test
whose routes the server does not have yet is skipped with 「路由尚未合入: …」 (:func:`need_routes`),
so it runs as soon as they land.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from ui_fixtures import Server
from ui_steps import idle, send, tab

LIBRARY = """# 东湖图书馆借阅规则

## 借书期限

东湖图书馆的图书借期为30天，每位读者最多同时借阅10册。

## 续借

借期届满前可以在网上续借一次，续借期为15天。

## 逾期

逾期归还的图书每册每天收取0.1元滞纳金。

## 开放时间

东湖图书馆每天8:00至22:00开放，法定节假日另行通知。
"""

ADMISSION = (
    "<html><head><meta charset='utf-8'><title>东湖大学招生信息</title></head><body>"
    "<h2>2023年四川省录取分数线</h2>"
    "<table><thead><tr><th rowspan='2'>专业名称</th><th colspan='2'>文史/历史类</th>"
    "<th colspan='2'>理工/物理类</th></tr><tr><th>最高</th><th>最低</th><th>最高</th><th>最低</th></tr>"
    "</thead><tbody>"
    "<tr><td>法学</td><td>650</td><td>640</td><td>655</td><td>648</td></tr>"
    "<tr><td>金融学类</td><td>633</td><td>619</td><td>625</td><td>610</td></tr>"
    "<tr><td>哲学类</td><td>611</td><td>600</td><td>602</td><td>597</td></tr>"
    "</tbody></table></body></html>"
)
FILES = {"东湖图书馆借阅规则.md": LIBRARY, "2023-四川省.html": ADMISSION}


def client(server: Server) -> httpx.Client:
    headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=30.0)


def fixture_folder(server: Server, name: str) -> Path:
    """The folder :func:`curated_kb` indexes into KB ``name``."""
    return server.home / "fixture_data" / name


def curated_kb(server: Server, name: str, *, remember: bool = False) -> str:
    """Index :data:`FILES` into a new KB ``name`` of the server's home (the server opens a KB only
    when asked for it, so it finds this one complete); returns ``name``. With ``remember`` the
    folder becomes the KB's sync source, as ``zhiwen index FOLDER`` makes it."""
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.kb import close_all, open_kb
    from zhiwen.sync.sources import remember_folder

    folder = fixture_folder(server, name)
    folder.mkdir(parents=True, exist_ok=True)
    for fname, text in FILES.items():
        (folder / fname).write_text(text, encoding="utf-8")
    settings = Settings(
        home=server.home, embedding={"provider": "hash"}, llm=LLMSettings(base_url=None), _env_file=None
    )
    kb = open_kb(name, settings=settings, create=True, embedder="hash")
    kb.index_path(folder, fmt="documents", progress=False)
    if remember:
        remember_folder(kb, folder)
    close_all()
    return name


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def need_routes(server: Server, *paths: str) -> None:
    """Skip the test unless the server has every route ``paths`` names (OpenAPI paths; the names
    of path parameters do not matter: ``{kb}`` matches ``{kb_name}``)."""
    with client(server) as http:
        have = {_shape(p) for p in http.get("/openapi.json").json().get("paths", {})}
    missing = [p for p in paths if _shape(p) not in have]
    if missing:
        pytest.skip(f"路由尚未合入: {', '.join(missing)}")


def ask_chat(page: Any, question: str, kb: str) -> Any:
    """Ask ``question`` of ``kb`` in 通用问答; returns the (finished) answer bubble."""
    tab(page, "chat")
    page.select_option("#chat-kb", kb)
    send(page, question)
    idle(page, "#chat-thread [data-testid=chat-answer]")
    return page.locator("#chat-thread [data-testid=chat-answer]").last


def open_owner(page: Any, kb: str, panel: str) -> Any:
    """The owner's area of ``kb`` from the 知识库 list, at ``panel``; returns the panel."""
    tab(page, "kbs")
    page.locator(f"[data-kb='{kb}'] [data-testid=kb-manage]").click()
    page.wait_for_selector("#view-owner:not([hidden])")
    page.get_by_test_id(f"owner-tab-{panel}").click()
    page.wait_for_selector(f"#owner-body[data-panel={panel}]")
    return page.get_by_test_id(f"owner-{panel}")
