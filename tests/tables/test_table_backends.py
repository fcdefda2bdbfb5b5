"""A table question answered alike on every store backend: the table catalogue lives beside the
KB's settings, whatever holds its chunks and vectors."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from store.conftest import PG_URL, postgres_unavailable_reason
from zhiwen.answer.qa import answer_question
from zhiwen.kb import close_all, delete_kb, open_kb


def _store_url(backend: str, tmp_path: Path) -> str:
    if backend == "postgres":
        reason = postgres_unavailable_reason()
        if reason:
            pytest.skip(reason)
        return PG_URL
    if backend == "qdrant":
        pytest.importorskip("qdrant_edge", reason="the [qdrant] extra (qdrant-edge-py) is not installed")
        return f"qdrant+local://{tmp_path / 'qdrant'}"
    return "embedded"


@pytest.mark.parametrize("backend", ["embedded", "postgres", "qdrant"])
def test_a_cell_and_an_aggregate_on_every_backend(
    zhiwen_home: Path, site: Path, tmp_path: Path, backend: str
) -> None:
    name = f"scores_{backend}_{tmp_path.name[-6:]}".replace("-", "_").lower()
    kb = open_kb(name, create=True, embedder="hash", store=_store_url(backend, tmp_path))
    try:
        kb.index_path(site, fmt="documents", progress=False, dense="skip")
        cell = answer_question(kb, "2021年四川省物理类金融学类最低分是多少？", llm=None)
        assert cell.route == "table" and "**612**" in cell.answer.split("\n")[0]
        top = answer_question(kb, "2023年四川省物理类哪个专业最低分最高？", llm=None)
        assert top.data["table"]["kind"] == "sql" and "**法学**" in top.answer.split("\n")[0]
    finally:
        with contextlib.suppress(Exception):
            delete_kb(name)  # a PostgreSQL schema outlives the home otherwise
        close_all()
