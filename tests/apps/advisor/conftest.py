"""Fixtures for the advisor: one session home with small KBs (hash embedder) and market tables.

The policy KB holds four statutes (not all), the FAQ KB the shipped FAQ, and the market tables
all five Lianjia CSVs (~0.2 s). Built once per session in a temporary ZHIWEN_HOME with the LLM
unset and no ``.env``, so no test reaches a real endpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from advisor_questions import TEST_STATUTES, make_settings

from zhiwen.appkit.app import AppContext
from zhiwen.config import Settings

SHARED_DATA = Path(
    os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data")
)


def need_shared_data() -> Path:
    if not (SHARED_DATA / "lianjia_ershoufang").is_dir() or not (SHARED_DATA / "cn_law_subset").is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set ZHIWEN_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared() -> Path:
    return need_shared_data()


@pytest.fixture(scope="session")
def advisor_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("advisor_home"))


@pytest.fixture(scope="session")
def advisor_ctx(advisor_settings: Settings, shared: Path) -> AppContext:
    """A context over the session home, with the KBs and market tables built (no LLM)."""
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.advisor.kb import build_faq_kb, build_policy_kb
    from zhiwen.apps.advisor.market import build_market, market_path

    ctx = build_context(advisor_settings, llm=None)
    build_policy_kb(ctx, shared / "cn_law_subset", names=TEST_STATUTES, progress=False)
    build_faq_kb(ctx, progress=False)
    build_market(shared).save(market_path(advisor_settings.home))
    return ctx


@pytest.fixture(scope="session")
def market(shared: Path) -> Any:
    from zhiwen.apps.advisor.market import build_market

    return build_market(shared)
