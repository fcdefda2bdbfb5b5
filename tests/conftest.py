"""Shared fixtures: an isolated ZHIWEN_HOME per test and access to ../shared/data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.fake_openai import FakeOpenAI
from zhiwen.config import reset_settings_cache
from zhiwen.llm import OpenAIChatClient

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; tests that need it are skipped with a reason in a user's fresh clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (present in CI; set ZHIWEN_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture
def zhiwen_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ZHIWEN_HOME with the LLM unset, so no test ever reaches a real endpoint."""
    home = tmp_path / "zhiwen_home"
    monkeypatch.setenv("ZHIWEN_HOME", str(home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.delenv("ZHIWEN_STORE", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env from the developer's working directory
    reset_settings_cache()
    yield home
    reset_settings_cache()


# -- the LLM layer: a running fake OpenAI-compatible server (tests/llm, tests/answer) --
@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def client(fake_llm: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    c = OpenAIChatClient(
        base_url=fake_llm.base_url,
        model="fake-model",
        api_key="sk-test",
        timeout_s=2.0,
        max_retries=2,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    yield c
    c.close()
