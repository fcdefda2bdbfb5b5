"""``zhiwen eval`` runs unchanged on the PostgreSQL backend (skipped when none is reachable)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli.main import app
from zhiwen.config import reset_settings_cache

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

pytestmark = pytest.mark.postgres


def _pg_reason() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:
        first = f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
        return f"{first} (bash scripts/test.sh --system sets it up)"
    return None


def test_eval_on_postgres(tiny_beir: Path, zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = _pg_reason()
    if reason:
        pytest.skip(reason)
    from zhiwen.store.postgres import drop_kb

    monkeypatch.setenv("ZHIWEN_STORE", PG_URL)
    reset_settings_cache()
    name = f"eval_pg_{uuid.uuid4().hex[:8]}"
    try:
        res = CliRunner().invoke(
            app, ["eval", str(tiny_beir), "--embedder", "hash", "--kb", name, "--mode", "all", "--json"]
        )
        assert res.exit_code == 0, res.output
        data = json.loads(res.stdout)
        assert data["store"] == "postgresql"  # the URL (it may hold a password) is not echoed
        assert PG_URL not in res.stdout
        bm25 = next(r for r in data["results"] if r["label"] == "bm25")
        assert bm25["recall@10"] == 1.0
        assert all(0.0 <= r["ndcg@10"] <= 1.0 for r in data["results"])
    finally:
        drop_kb(PG_URL, name)
