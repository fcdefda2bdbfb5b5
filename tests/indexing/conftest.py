"""Fixtures for the indexing tests against real ``zhiwen`` processes.

Every process gets the test's own ``ZHIWEN_HOME``, the ``hash`` embedder slowed down to
``ZHIWEN_TEST_EMBED_DELAY`` seconds per passage (``slow_zhiwen.py``) and small batches, so a
run's phase 2 lasts long enough to be searched, interrupted, killed or raced — predictably.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexing.helpers import Spawn
from zhiwen.config import reset_settings_cache

SLOW_ZHIWEN = Path(__file__).with_name("slow_zhiwen.py")
DELAY_S = 0.02  # per passage: a batch of 8 takes 0.16 s
BATCH = 8


@pytest.fixture
def home(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    yield zhiwen_home
    from zhiwen.kb import close_all

    close_all()


@pytest.fixture
def zw_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ZHIWEN_HOME": str(home),
            "ZHIWEN_EMBEDDING__PROVIDER": "hash",
            "ZHIWEN_EMBEDDING__BATCH_SIZE": str(BATCH),
            "ZHIWEN_TEST_EMBED_DELAY": str(DELAY_S),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@pytest.fixture
def spawn(zw_env: dict[str, str]) -> Iterator[Spawn]:
    """``spawn("index", "--kb", "c", …, delay=0.02, gate=path)`` starts a zhiwen process (killed
    at teardown); while ``gate`` exists, its embedding batches wait."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str, delay: float | None = None, gate: Path | None = None) -> subprocess.Popen[str]:
        env = dict(zw_env)
        if delay is not None:
            env["ZHIWEN_TEST_EMBED_DELAY"] = str(delay)
        if gate is not None:
            env["ZHIWEN_TEST_EMBED_GATE"] = str(gate)
        proc = subprocess.Popen(
            [sys.executable, str(SLOW_ZHIWEN), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
