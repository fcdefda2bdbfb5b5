"""Shared fixtures: an isolated ZHIWEN_HOME per test and access to ../shared/data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.fake_openai import FakeOpenAI
from zhiwen.config import reset_settings_cache
from zhiwen.llm import OpenAIChatClient

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))

# Directories whose tests share a session fixture that is costly to build (a KB over shared data,
# PDFs printed by chromium, a live server with its browser): under pytest-xdist each runs on one
# worker, so the fixture is built once. Every other test file is a unit of its own, which keeps
# its module fixtures (servers, KBs) built once too.
SESSION_GROUPS = (
    "apps/advisor",
    "apps/listings",
    "apps/policy",
    "apps/recipes",
    "browser",
    "faults",
    "ingest",
    "llm_real",
    "openai_front",
)


def xdist_unit_of(nodeid: str) -> str:
    """The scheduling unit of a test: its session group's directory, else its file."""
    path = nodeid.split("::", 1)[0]
    return next((f"tests/{group}" for group in SESSION_GROUPS if path.startswith(f"tests/{group}/")), path)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (scripts/test.sh), with the session groups above as one unit each.

    xdist's own ``loadgroup`` renames node ids, which this pytest no longer lets a plugin do."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SessionGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit_of(nodeid)

    return SessionGroupScheduling(config, log)


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
