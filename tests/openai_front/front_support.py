"""Helpers of the OpenAI front door tests: every app's KBs built small, and a uvicorn server.

:func:`build_all` builds, with the ``hash`` embedder and no LLM (~10 s):

* ``demo`` — a generic KB (no app): generic QA;
* ``recipes`` — a handful of HowToCook dishes;
* ``listings`` — the first 300 Shanghai Lianjia rows;
* ``advisor_policy`` / ``advisor_faq`` + market tables — four statutes, the shipped FAQ;
* ``policy_visa`` / ``policy_airline`` / ``policy_general`` — the policy tests' mini data.

:class:`Server` runs the app on 127.0.0.1, so the official clients talk real HTTP and SSE to it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from zhiwen.config import LLMSettings, Settings
from zhiwen.documents import Document

TESTS = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ZHIWEN_SHARED_DATA", TESTS.parents[1] / "shared" / "data"))
DISHES = (
    "vegetable_dish/西红柿炒鸡蛋.md",
    "vegetable_dish/凉拌黄瓜.md",
    "staple/蛋炒饭.md",
    "meat_dish/可乐鸡翅.md",
)
STATUTES = ("契税法", "个人所得税法", "增值税法", "上海市住房公积金管理若干规定")

DEMO_DOCS = [
    ("create", "创建知识库", "# 创建知识库\n\n运行 zhiwen index --kb 名称 目录 即可创建知识库并导入文档。"),
    ("search", "检索模式", "# 检索模式\n\n知问支持 bm25、dense、hybrid 三种检索模式，默认混合检索。"),
    ("llm", "配置大模型", "# 配置大模型\n\n设置 ZHIWEN_LLM__BASE_URL 即可接入任意 OpenAI 兼容的大模型。"),
    ("admin", "管理接口", "# 管理接口\n\n管理接口需要在配置中设置 admin_token，用于运行时修改检索参数。"),
]


def make_settings(home: Path, **overrides: Any) -> Settings:
    return Settings(  # type: ignore[call-arg]
        home=home, llm=LLMSettings(base_url=None), embedding={"provider": "hash"}, _env_file=None, **overrides
    )


def _load_by_path(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_demo(settings: Settings) -> None:
    from zhiwen.kb import open_kb

    kb = open_kb("demo", settings=settings, create=True, embedder="hash")
    kb.index_documents([Document(id=i, title=t, text=x) for i, t, x in DEMO_DOCS], progress=False)


def build_all(settings: Settings, tmp: Path) -> None:
    """Every app's KBs, small (the app tests' own recipes for building them quickly)."""
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.advisor.kb import build_faq_kb, build_policy_kb
    from zhiwen.apps.advisor.market import build_market, market_path
    from zhiwen.apps.listings.ingest import load_lianjia
    from zhiwen.apps.policy import app as policy_app
    from zhiwen.apps.recipes.ingest import load_howtocook
    from zhiwen.kb import open_kb

    build_demo(settings)
    dishes = tmp / "dishes"
    for rel in DISHES:
        target = dishes / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / "howtocook" / "dishes" / rel, target)
    recipes = open_kb("recipes", settings=settings, create=True, embedder="hash", app="recipes")
    recipes.index_corpus(load_howtocook(dishes), progress=False)

    corpus = load_lianjia(SHARED / "lianjia_ershoufang" / "ErshoufangSpider_sh.csv", limit=300)
    listings = open_kb("listings", settings=settings, create=True, embedder="hash", app="listings")
    listings.index_documents(corpus.documents, chunks=corpus.chunks, progress=False)

    ctx = build_context(settings, llm=None)
    build_policy_kb(ctx, SHARED / "cn_law_subset", names=STATUTES, progress=False)
    build_faq_kb(ctx, progress=False)
    build_market(SHARED).save(market_path(settings.home))

    fixtures = _load_by_path("openai_policy_fixtures", TESTS / "apps" / "policy" / "policy_fixtures.py")
    policy_app.setup(fixtures.write_mini_data(tmp / "policy_data"), ctx, progress=False)


class Server:
    """uvicorn on 127.0.0.1 in a thread (real loopback HTTP and SSE)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", limit_concurrency=200)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
