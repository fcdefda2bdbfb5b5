"""The recipe app's ingest plug-in: HowToCook recognised by content, recipe metadata, the KB."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from zhiwen.apps.recipes import app
from zhiwen.apps.recipes.ingest import load_howtocook, sniff_howtocook
from zhiwen.ingest import chunk_documents, load_corpus

pytestmark = pytest.mark.shared_data


@pytest.fixture
def dishes(shared_data: Path) -> Path:
    return shared_data / "howtocook" / "dishes"


def _write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


@pytest.fixture
def recipes_tree(tmp_path: Path, dishes: Path) -> Path:
    root = tmp_path / "我的菜谱"  # not called "dishes": detection is by content
    shutil.copytree(dishes / "meat_dish" / "宫保鸡丁", root / "meat_dish" / "宫保鸡丁")
    shutil.copytree(dishes / "template", root / "template")
    first = sorted((dishes / "soup").glob("*.md"))[0]
    _write(root / "soup" / first.name, first.read_bytes())
    # a README inside a dish folder is named after the folder
    _write(root / "meat_dish" / "宫保鸡丁" / "README.md", "# 说明\n预估烹饪难度：★★\n")
    return root


def test_detected_by_content_not_folder_name(recipes_tree: Path, tmp_path: Path) -> None:
    assert sniff_howtocook(recipes_tree) and app.sniff(recipes_tree) == "howtocook"
    plain = tmp_path / "dishes"
    _write(plain / "notes.md", "# 笔记\n与菜谱无关的内容\n")
    assert not sniff_howtocook(plain) and app.sniff(plain) is None


def test_recipe_metadata(recipes_tree: Path) -> None:
    corpus = load_howtocook(recipes_tree)
    assert corpus.kb_defaults == {"app": "recipes"}
    by_id = {d.id: d for d in corpus.documents}
    assert not any(i.startswith("template/") for i in by_id)
    gb = by_id["meat_dish/宫保鸡丁/宫保鸡丁"]
    assert gb.title == "宫保鸡丁的做法"
    assert gb.metadata == {
        "source": "meat_dish/宫保鸡丁/宫保鸡丁.md",
        "category": "meat_dish",
        "difficulty": 4,
        "name": "宫保鸡丁",
    }
    assert by_id["meat_dish/宫保鸡丁/README"].metadata["name"] == "宫保鸡丁"
    soup = next(d for d in corpus.documents if d.id.startswith("soup/"))
    assert soup.metadata["category"] == "soup" and 1 <= soup.metadata["difficulty"] <= 5
    # children inherit the recipe's metadata
    chunks = chunk_documents([gb], max_chars=800, overlap=80)
    assert all(c.metadata["category"] == "meat_dish" and c.parent_id == gb.id for c in chunks)
    assert "宫保鸡丁的做法 > 操作 > 简易版本" in {c.metadata["section"] for c in chunks}
    # the engine's plain markdown loader knows nothing of recipes
    assert "category" not in load_corpus(recipes_tree, "markdown").documents[0].metadata


def test_category_folder_as_root(dishes: Path) -> None:
    sub = load_howtocook(dishes / "soup")
    assert sub.documents[0].metadata["category"] == "soup"


def test_whole_howtocook_dishes(dishes: Path) -> None:
    corpus = load_howtocook(dishes)
    assert len(corpus.documents) == 368
    cats = {d.metadata["category"] for d in corpus.documents}
    assert "template" not in cats and {"meat_dish", "vegetable_dish", "soup"} <= cats
    assert all(1 <= d.metadata["difficulty"] <= 5 for d in corpus.documents)
