"""Fixtures of the policy app: the mini data and the KBs built from it once per session (hash embedder).

``shared_ctx`` builds the KBs from the real ``../shared/data`` (skipped when it is absent).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from policy_fixtures import SHARED_DATA, make_settings, write_mini_data

from zhiwen.appkit.app import AppContext
from zhiwen.config import Settings


@pytest.fixture(scope="session")
def mini_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mini_data(tmp_path_factory.mktemp("policy_data"))


@pytest.fixture(autouse=True)
def _policy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ZHIWEN_POLICY__* from the developer's shell; fresh settings per test."""
    from zhiwen.apps.policy.settings import reset_policy_settings

    for key in list(os.environ):
        if key.startswith("ZHIWEN_POLICY__"):
            monkeypatch.delenv(key)
    reset_policy_settings()
    yield
    reset_policy_settings()


def build(settings: Settings, data: Path) -> AppContext:
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.policy import app

    ctx = build_context(settings, llm=None)
    app.setup(data, ctx, progress=False)
    return ctx


@pytest.fixture(scope="session")
def mini_settings(tmp_path_factory: pytest.TempPathFactory, mini_data: Path) -> Settings:
    settings = make_settings(tmp_path_factory.mktemp("policy_home"))
    build(settings, mini_data)
    return settings


@pytest.fixture
def mini_ctx(mini_settings: Settings) -> AppContext:
    from zhiwen.appkit.context import build_context

    return build_context(mini_settings, llm=None)


@pytest.fixture(scope="session")
def shared_ctx(tmp_path_factory: pytest.TempPathFactory) -> AppContext:
    """The three KBs built from the real ``../shared/data`` (hash embedder, ~3 s)."""
    if not (SHARED_DATA / "cn_law_subset").is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set ZHIWEN_SHARED_DATA)")
    return build(make_settings(tmp_path_factory.mktemp("policy_shared_home")), SHARED_DATA)
