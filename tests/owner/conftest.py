"""Owner routes and commands: a small KB ``shop`` (hash embedder) in an isolated home, an app
with keys — one for ``shop``, one for another KB, a read-only one — and the admin token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import Settings, reset_settings_cache
from zhiwen.documents import Document
from zhiwen.kb import KnowledgeBase, close_all, open_kb

ADMIN = "adm1n-token"
KEYS = [
    {"key": "sk-shop", "kbs": ["shop"]},
    {"key": "sk-other", "kbs": ["other"]},
    {"key": "sk-read", "write": False},
]
DOCS = {
    "guide": (
        "安装与配置",
        "# 安装\n运行 pip install zhiwen 即可完成安装，需要 Python 3.11。\n\n"
        "## 配置模型\n在 config.toml 里填写大模型的地址和密钥。\n",
    ),
    "policy": (
        "售后政策",
        "# 退货\n商品签收后七天内可以申请退货，运费由买家承担。\n\n"
        "## 换货\n质量问题十五天内可以换货，运费由商家承担。\n",
    ),
}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


OWNER = bearer("sk-shop")
OTHER = bearer("sk-other")
READER = bearer("sk-read")
ADMIN_H = bearer(ADMIN)


@pytest.fixture
def settings(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    yield Settings(home=zhiwen_home, embedding={"provider": "hash"}, api={"admin_token": ADMIN, "keys": KEYS})
    close_all()


@pytest.fixture
def shop(settings: Settings) -> KnowledgeBase:
    kb = open_kb("shop", settings=settings, create=True, embedder="hash")
    docs = [Document(id=i, text=text, title=title) for i, (title, text) in DOCS.items()]
    kb.index_documents(docs, progress=False)
    return kb


@pytest.fixture
def http(settings: Settings, shop: KnowledgeBase) -> Iterator[TestClient]:
    with TestClient(create_app(settings, app_routers=False)) as client:
        yield client
