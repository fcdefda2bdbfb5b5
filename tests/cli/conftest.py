"""CLI test fixtures: an isolated home with the instant ``hash`` embedder and a CliRunner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from zhiwen.config import reset_settings_cache


@pytest.fixture
def cli_home(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.setenv("COLUMNS", "200")  # rich tables wide enough to assert on
    reset_settings_cache()
    yield zhiwen_home
    from zhiwen.kb import close_all

    close_all()


@pytest.fixture
def zw(cli_home: Path) -> Callable[..., Result]:
    """``zw("search", "--kb", "x", "q")`` runs the zhiwen CLI in-process."""
    from zhiwen.cli.main import app

    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(app, list(args), input=input)

    return invoke


@pytest.fixture
def md_dir(tmp_path: Path) -> Path:
    """A tiny HowToCook-shaped markdown tree."""
    root = tmp_path / "dishes"
    files = {
        "meat_dish/宫保鸡丁.md": "# 宫保鸡丁的做法\n预估烹饪难度：★★★\n"
        "## 必备原料和工具\n- 鸡胸肉\n- 花生米\n"
        "## 操作\n- 鸡丁下锅翻炒，加入花生米\n",
        "vegetable_dish/麻婆豆腐.md": "# 麻婆豆腐的做法\n预估烹饪难度：★★\n"
        "## 必备原料和工具\n- 豆腐\n- 豆瓣酱\n"
        "## 操作\n- 豆腐切块焯水，加豆瓣酱烧制\n",
        "soup/西红柿鸡蛋汤.md": "# 西红柿鸡蛋汤的做法\n预估烹饪难度：★\n"
        "## 必备原料和工具\n- 西红柿\n- 鸡蛋\n"
        "## 操作\n- 水开后淋入蛋液\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
    return root
