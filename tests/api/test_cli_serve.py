"""``zhiwen demo`` KB freshness and ``zhiwen serve`` argument errors (no server started)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli import serve as serve_mod
from zhiwen.cli.main import app
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter


def test_demo_kb_built_once_then_reused(
    zhiwen_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(home=zhiwen_home)
    first = serve_mod.ensure_demo_kb(settings, embedder="hash", progress=False)
    assert first["built"] and first["documents"] >= 5 and first["chunks"] >= 20
    assert serve_mod.ensure_demo_kb(settings, embedder="hash", progress=False)["built"] is False
    assert serve_mod.ensure_demo_kb(settings, embedder="hash", rebuild=True, progress=False)["built"] is True

    # a changed sample (e.g. after an upgrade) is re-indexed
    import zhiwen.ingest as ingest

    sample = tmp_path / "sample"
    sample.mkdir()
    (sample / "a.md").write_text("# 新手册\n\n知问支持混合检索。\n", encoding="utf-8")
    monkeypatch.setattr(ingest, "sample_kb_path", lambda: sample)
    again = serve_mod.ensure_demo_kb(settings, embedder="hash", progress=False)
    assert again["built"] and again["documents"] == 1


def test_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(InvalidParameter, match="无法监听"):
            serve_mod._check_port("127.0.0.1", port)
        result = CliRunner().invoke(app, ["serve", "--port", str(port)])
    assert result.exit_code == 2
    assert "无法监听" in result.output


def test_bad_port() -> None:
    result = CliRunner().invoke(app, ["serve", "--port", "70000"])
    assert result.exit_code == 2 and "端口号无效" in result.output


def test_help_lists_commands() -> None:
    out = CliRunner().invoke(app, ["--help"]).output
    assert "serve" in out and "demo" in out
