"""Shared fixtures: the Shanghai Lianjia CSV indexed ONCE per session (hash embedder, ~6 s).

The session KB lives in its own temporary ZHIWEN_HOME with explicit settings (LLM unset, no
``.env``), so it never touches the developer's home and no test reaches a real LLM.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zhiwen.config import LLMSettings, Settings

SHARED_DATA = Path(
    os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data")
)
LIANJIA = SHARED_DATA / "lianjia_ershoufang"
SH_CSV = LIANJIA / "ErshoufangSpider_sh.csv"


def make_settings(home: Path, **overrides: Any) -> Settings:
    return Settings(home=home, llm=LLMSettings(base_url=None), _env_file=None, **overrides)  # type: ignore[call-arg]


@pytest.fixture(scope="session")
def sh_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("listings_home"))


@pytest.fixture(scope="session")
def sh_kb(sh_settings: Settings) -> Iterator[Any]:
    """The Shanghai listings (2,316) in KB ``listings`` of the session home."""
    if not SH_CSV.is_file():
        pytest.skip(f"shared data not found at {SH_CSV} (set ZHIWEN_SHARED_DATA)")
    from zhiwen.apps.listings.ingest import load_lianjia
    from zhiwen.kb import open_kb

    corpus = load_lianjia(SH_CSV)
    kb = open_kb("listings", settings=sh_settings, create=True, embedder="hash", app="listings")
    kb.index_documents(corpus.documents, chunks=corpus.chunks, progress=False)
    yield kb
    kb.close()


@pytest.fixture(scope="session")
def sh_corpus() -> Any:
    if not SH_CSV.is_file():
        pytest.skip(f"shared data not found at {SH_CSV} (set ZHIWEN_SHARED_DATA)")
    from zhiwen.apps.listings.ingest import load_lianjia

    return load_lianjia(SH_CSV)
