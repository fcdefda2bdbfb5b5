"""``zhiwen policy setup``: each KB named as it is built, an ETA, a return once every KB answers.

The CLI and the API answer right after the text-only setup; ``zhiwen serve``'s filler (the same
lifespan hook the server runs) then fills the vectors, and ``--wait`` fills them in the setup.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from policy_fixtures import make_settings
from typer.testing import CliRunner

from support.setup_home import flat, fresh_home
from zhiwen.appkit.context import build_context
from zhiwen.apps.policy import app
from zhiwen.kb import open_kb

KBS = ("policy_visa", "policy_airline", "policy_general")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from fresh_home(tmp_path, monkeypatch)


def coverage(home: Path, name: str) -> float | None:
    return open_kb(name, settings=make_settings(home)).dense_coverage()


def test_setup_names_each_kb_shows_an_eta_and_returns_before_the_vectors(home: Path, mini_data: Path) -> None:
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", str(mini_data)])
    assert r.exit_code == 0, r.output
    out = flat(r.stdout)
    assert "将建立3个知识库（policy_visa、policy_airline、policy_general）" in out
    assert "预计：文本索引约" in out and "全部约" in out  # the ETA of the whole job
    for i, spec in enumerate(app.kbs, 1):
        assert flat(f"[{i}/3] 知识库 {spec.name}「{spec.description}」") in out
    assert "向量还差" in out and "zhiwenserve" in out and f"zhiwenpolicysetup{mini_data}--wait" in out
    assert all(coverage(home, name) == 0.0 for name in KBS)
    # the CLI answers at once, from the text indexes
    asked = CliRunner().invoke(group, ["ask", "中国公民去泰国需要签证吗？", "--as-of", "2026-01-01"])
    assert asked.exit_code == 0 and "意图：免签政策" in asked.stdout and "泰国" in asked.stdout
    # so does the API; the server's start then fills every KB's vectors in the background
    from zhiwen.api.app import create_app
    from zhiwen.api.background import Background
    from zhiwen.kb.registry import vector_filler

    settings = make_settings(home)
    server = create_app(settings, background=Background(vectors=True))
    with TestClient(server) as client:
        r = client.post("/api/v1/policy/ask", json={"question": "中国公民去泰国需要签证吗？"})
        assert r.status_code == 200 and r.json()["data"]["intent"] == "visa_free"
        assert "泰国" in r.json()["data"]["answer"]
        assert vector_filler().wait_idle(timeout=120)
    assert all(coverage(home, name) == 1.0 for name in KBS)


def test_wait_fills_the_vectors_in_the_setup(home: Path, mini_data: Path) -> None:
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", str(mini_data), "--wait"])
    assert r.exit_code == 0, r.output
    assert "向量已全部补全" in flat(r.stdout) and "向量还差" not in r.stdout
    assert all(coverage(home, name) == 1.0 for name in KBS)
    report = app.setup(mini_data, build_context(), progress=False, wait=False)
    assert report.vectors_missing == 0 and report.text_ready_seconds > 0  # a re-run embeds nothing
