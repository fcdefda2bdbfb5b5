"""``zhiwen recipes setup``: returns once the text index answers, says how the vectors fill in.

A few HowToCook categories (hash embedder) keep it fast; the CLI and the API answer right after
the setup, before any vector exists, and ``zhiwen serve``'s filler then completes the KB.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from support.setup_home import flat, fresh_home
from zhiwen.apps.recipes import app
from zhiwen.config import LLMSettings, Settings
from zhiwen.kb import open_kb

pytestmark = pytest.mark.shared_data
SHARED = Path(
    os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data")
)
DISHES = SHARED / "howtocook" / "dishes"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    if not DISHES.is_dir():
        pytest.skip(f"HowToCook dishes not found at {DISHES} (set ZHIWEN_SHARED_DATA)")
    root = tmp_path / "data"
    for category in ("vegetable_dish", "soup"):
        shutil.copytree(DISHES / category, root / "howtocook" / "dishes" / category)
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from fresh_home(tmp_path, monkeypatch)


def settings_of(home: Path) -> Settings:
    return Settings(home=home, llm=LLMSettings(base_url=None), embedding={"provider": "hash"}, _env_file=None)  # type: ignore[call-arg]


def test_setup_returns_with_the_vectors_missing_and_answers_at_once(home: Path, data: Path) -> None:
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", str(data)])
    assert r.exit_code == 0, r.output
    out = flat(r.stdout)
    assert "预计：文本索引约" in out and "[1/1]知识库recipes「HowToCook菜谱" in out
    assert "文本索引已就绪" in out and "向量还差" in out and "zhiwenserve" in out and "--wait" in out
    kb = open_kb("recipes", settings=settings_of(home))
    assert kb.dense_coverage() == 0.0 and kb.config.app == "recipes"
    asked = CliRunner().invoke(group, ["ask", "凉拌黄瓜怎么做"])
    assert asked.exit_code == 0 and "凉拌黄瓜" in asked.stdout
    from zhiwen.api.app import create_app
    from zhiwen.api.background import Background
    from zhiwen.kb.registry import vector_filler

    settings = settings_of(home)
    server = create_app(settings, background=Background(vectors=True))
    with TestClient(server) as client:
        r = client.post("/api/v1/qa", json={"kb": "recipes", "question": "凉拌黄瓜怎么做"})
        assert r.status_code == 200 and "凉拌黄瓜" in r.json()["data"]["answer"]
        assert vector_filler().wait_idle(timeout=120)
    assert open_kb("recipes", settings=settings).dense_coverage() == 1.0


def test_wait_fills_the_vectors(home: Path, data: Path) -> None:
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", str(data), "--wait"])
    assert r.exit_code == 0, r.output
    assert "向量已全部补全" in flat(r.stdout)
    assert open_kb("recipes", settings=settings_of(home)).dense_coverage() == 1.0
