"""What the app-setup tests share: a fresh home on the hash embedder with no LLM, and output
compared without rich's line wrapping.

Example (a test module's fixture)::

    @pytest.fixture
    def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
        yield from fresh_home(tmp_path, monkeypatch)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiwen.config import reset_settings_cache
from zhiwen.kb import close_all


def flat(text: str) -> str:
    """The output without whitespace: rich wraps long lines at the runner's 80 columns."""
    return re.sub(r"\s+", "", text)


def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    monkeypatch.setenv("ZHIWEN_HOME", str(home))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    reset_settings_cache()
    yield home
    close_all()
    reset_settings_cache()
