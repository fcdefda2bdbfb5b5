"""``zhiwen eval`` on the tiny BEIR dataset."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from zhiwen.cli.main import app

runner = CliRunner()


def test_eval_json(tiny_beir: Path, zhiwen_home: Path) -> None:
    res = runner.invoke(app, ["eval", str(tiny_beir), "--embedder", "hash", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["kb"] == "eval-tiny_beir-hash" and data["n_queries"] == 4
    assert [r["label"] for r in data["results"]] == ["bm25", "dense", "hybrid"]
    assert data["build"]["documents"] == 8
    for r in data["results"]:
        assert 0.0 <= r["ndcg@10"] <= 1.0 and r["latency"]["p50_ms"] >= 0


def test_eval_table(tiny_beir: Path, zhiwen_home: Path) -> None:
    res = runner.invoke(
        app,
        [
            "eval",
            str(tiny_beir),
            "--embedder",
            "hash",
            "--mode",
            "hybrid",
            "--fusion",
            "rrf",
            "--queries",
            "3",
            "--kb",
            "tiny",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "nDCG@10" in res.output and "hybrid (rrf)" in res.output and "tiny" in res.output


def test_eval_bad_input(tmp_path: Path, tiny_beir: Path, zhiwen_home: Path) -> None:
    res = runner.invoke(app, ["eval", str(tmp_path / "nope"), "--embedder", "hash"])
    assert res.exit_code == 2 and "错误" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["eval", str(tiny_beir), "--mode", "fuzzy"])
    assert res.exit_code == 2 and "fuzzy" in res.output
    res = runner.invoke(app, ["eval", str(tiny_beir), "--fusion", "max", "--embedder", "hash"])
    assert res.exit_code == 2 and "max" in res.output
    res = runner.invoke(app, ["eval", str(tiny_beir), "--embedder", "nosuch"])
    assert res.exit_code == 2 and "nosuch" in res.output
