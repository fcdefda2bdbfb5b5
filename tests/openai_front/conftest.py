"""Fixtures of the OpenAI front door: one home with every app's KBs built small, served by uvicorn.

``front_settings`` is that home (built once per session, :func:`front_support.build_all`);
``base_url`` is a real uvicorn server on 127.0.0.1 over it (the official clients talk real HTTP
and real SSE to it); ``client`` is the official ``openai`` client pointed at it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from front_support import SHARED, Server, build_all, make_settings

from zhiwen.config import Settings


@pytest.fixture(scope="session")
def front_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    for needed in ("howtocook", "lianjia_ershoufang", "cn_law_subset"):
        if not (SHARED / needed).is_dir():
            pytest.skip(f"shared data not found at {SHARED / needed} (set ZHIWEN_SHARED_DATA)")
    from zhiwen.apps.policy.settings import reset_policy_settings

    reset_policy_settings()
    tmp = tmp_path_factory.mktemp("openai_front")
    settings = make_settings(tmp / "home")
    build_all(settings, tmp)
    return settings


@pytest.fixture(scope="session")
def base_url(front_settings: Settings) -> Iterator[str]:
    from zhiwen.api.app import create_app

    with Server(create_app(front_settings)) as base:
        yield base


@pytest.fixture(scope="session")
def client(base_url: str) -> Iterator[Any]:
    from openai import OpenAI

    with OpenAI(base_url=f"{base_url}/v1", api_key="none", max_retries=0, timeout=120) as c:
        yield c
