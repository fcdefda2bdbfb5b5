"""``zhiwen listings setup``: the app's vectors declaration is honoured, and can be overridden.

The listings KB answers as soon as its text index is built; whether setup embeds follows the
app's declaration (``KBSpec.vectors``, measured on the app's question set) unless
``ZHIWEN_LISTINGS__VECTORS`` says otherwise (a small slice of the Shanghai CSV, hash embedder).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from support.setup_home import flat, fresh_home
from zhiwen.apps.listings import app
from zhiwen.config import LLMSettings, Settings, reset_settings_cache
from zhiwen.kb import open_kb

SHARED = Path(
    os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data")
)
SH_CSV = SHARED / "lianjia_ershoufang" / "ErshoufangSpider_sh.csv"


def make_settings(home: Path) -> Settings:
    return Settings(home=home, llm=LLMSettings(base_url=None), embedding={"provider": "hash"}, _env_file=None)  # type: ignore[call-arg]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    if not SH_CSV.is_file():
        pytest.skip(f"shared data not found at {SH_CSV} (set ZHIWEN_SHARED_DATA)")
    folder = tmp_path / "data" / "lianjia_ershoufang"
    folder.mkdir(parents=True)
    lines = SH_CSV.read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / SH_CSV.name).write_text("".join(lines[:121]), encoding="utf-8")  # header + 120 listings
    return folder.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("ZHIWEN_LISTINGS__VECTORS", raising=False)
    yield from fresh_home(tmp_path, monkeypatch)


def setup(*args: str) -> str:
    reset_settings_cache()
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", *args])
    assert r.exit_code == 0, r.output
    return flat(r.stdout)


def test_the_declaration_is_honoured(home: Path, data: Path) -> None:
    out = setup(str(data), "--wait")
    kb = open_kb("listings", settings=make_settings(home))
    declared = app.kbs[0].vectors
    assert kb.vectors_enabled is declared
    assert kb.dense_coverage() == (1.0 if declared else None)  # None: no vectors to report
    assert ("listings：只用文本索引" in out) is not declared
    asked = CliRunner().invoke(app.cli(), ["ask", "上海200万以上的两房", "--json"])  # type: ignore[arg-type]
    assert asked.exit_code == 0 and '"retrieved_properties"' in asked.stdout


def test_the_setting_turns_vectors_off_and_on(
    home: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZHIWEN_LISTINGS__VECTORS", "false")
    out = setup(str(data), "--wait")
    kb = open_kb("listings", settings=make_settings(home))
    assert not kb.vectors_enabled and kb.store.vector_count() == 0
    assert "listings：只用文本索引" in out and "ZHIWEN_LISTINGS__VECTORS=true" in out
    hits = kb.search("两房 电梯", top_k=3)
    assert hits and all(h.vector_rank is None for h in hits)  # BM25 alone
    monkeypatch.setenv("ZHIWEN_LISTINGS__VECTORS", "true")
    out = setup(str(data))
    kb = open_kb("listings", settings=make_settings(home))
    assert kb.vectors_enabled and "向量还差120个段落" in out
    setup(str(data), "--wait")
    assert open_kb("listings", settings=make_settings(home)).dense_coverage() == 1.0
