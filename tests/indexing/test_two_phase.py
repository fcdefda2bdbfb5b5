"""Lexical-first indexing in one process: the phases, background filling, failures, revisions, locks."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from indexing.helpers import write_beir
from zhiwen.config import get_settings
from zhiwen.documents import Document
from zhiwen.embed import EmbeddingCache, HashEmbedder, default_cache_dir, embed_chunks
from zhiwen.embed.batch import BatchWorker
from zhiwen.errors import KnowledgeBaseBusy, StoreUnavailable
from zhiwen.kb import list_kbs, open_kb
from zhiwen.kb.registry import vector_filler
from zhiwen.kb.writer import kb_lock


def _docs(n: int, tag: str = "") -> list[Document]:
    return [
        Document(id=f"d{i}", text=f"第{i}篇{tag}：知识库{i % 5}号讲检索与向量。", title=f"文档{i}")
        for i in range(n)
    ]


def test_skip_then_fill_and_coverage(home: Path) -> None:
    kb = open_kb("k", create=True)
    report = kb.index_documents(_docs(20), progress=False, dense="skip")
    assert report.changed and report.revision == 1 and report.vectors_missing == 20 and report.embedded == 0
    info = kb.info()
    assert info["dense_coverage"] == 0.0 and info["vectors"] == 0
    assert kb.search("知识库3号", mode="bm25", top_k=3)
    result = kb.search_detailed("知识库3号", mode="hybrid", top_k=3)  # dense branch empty: BM25 answers
    assert result.hits

    fill = kb.fill_vectors()
    assert (fill.embedded, fill.missing, fill.had) == (20, 0, 0)
    assert kb.info()["dense_coverage"] == 1.0 and kb.revision == 1  # vectors are no content change
    assert kb.search("知识库3号", mode="dense", top_k=3)


def test_rerun_resumes_from_store_and_cache(home: Path) -> None:
    kb = open_kb("k", create=True)
    kb.index_documents(_docs(20), progress=False, dense="skip")
    ids = kb.store.missing_vector_ids(limit=5)
    kb.set_vectors(ids, HashEmbedder().embed_passages([c.embed_text for c in kb.get_chunks(ids)]))
    report = kb.index_documents(_docs(20), prune=True, progress=False)
    assert not report.changed and report.resumed == 5 and report.embedded == 15

    # a second KB over the same documents takes from the cache what the first run embedded
    # (the 5 vectors set by hand above never went through the cache)
    other = open_kb("k2", create=True)
    report = other.index_documents(_docs(20), progress=False)
    assert report.embedded == 5 and report.resumed == 15 and other.info()["dense_coverage"] == 1.0


def test_background_fill(home: Path) -> None:
    kb = open_kb("k", create=True)
    report = kb.index_documents(_docs(30), progress=False, dense="background")
    assert report.dense == "background" and kb.search("知识库1号", mode="bm25", top_k=1)
    assert vector_filler().wait_idle(timeout=30)
    assert kb.info()["dense_coverage"] == 1.0


def test_resume_all_fills_every_incomplete_kb(home: Path) -> None:
    for name in ("a", "b"):
        open_kb(name, create=True).index_documents(_docs(10, name), progress=False, dense="skip")
    filler = vector_filler()
    assert filler.resume_all(get_settings()) == 2
    assert filler.wait_idle(timeout=30)
    assert [open_kb(n).info()["dense_coverage"] for n in ("a", "b")] == [1.0, 1.0]


def test_model_failure_keeps_the_lexical_index(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = open_kb("k", create=True)
    kb.index_documents(_docs(10), progress=False)

    def down(self: HashEmbedder, texts: list[str]) -> np.ndarray:
        raise StoreUnavailable("embedding endpoint down")

    monkeypatch.setattr(HashEmbedder, "_passages", down)
    changed = [*_docs(10)[:9], Document(id="d9", text="全新的段落：火锅底料的做法", title="火锅")]
    with pytest.raises(StoreUnavailable):
        kb.index_documents(changed, prune=True, progress=False)
    assert kb.revision == 2  # the text index was committed
    assert kb.search("火锅底料", mode="bm25", top_k=1)[0].chunk.doc_id == "d9"
    assert kb.info()["dense_coverage"] == pytest.approx(0.9)

    monkeypatch.undo()
    report = kb.index_documents(changed, prune=True, progress=False)  # the re-run completes it
    assert not report.changed and report.embedded == 1 and kb.info()["dense_coverage"] == 1.0


def test_revision_is_reread_under_the_lock(home: Path) -> None:
    kb = open_kb("k", create=True)
    kb.index_documents(_docs(3), progress=False)
    data = json.loads(kb.config_path.read_text("utf-8"))
    data["revision"] = 41  # another process committed meanwhile
    kb.config_path.write_text(json.dumps(data), "utf-8")
    assert kb.index_documents(_docs(4), progress=False).revision == 42


def test_concurrent_writers_in_threads_bump_once_each(home: Path) -> None:
    kb = open_kb("k", create=True)
    errors: list[BaseException] = []

    def run(tag: str) -> None:
        try:
            docs = [Document(id=f"{tag}{i}", text=f"{tag} 第{i}段", title=tag) for i in range(15)]
            kb.index_documents(docs, progress=False)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in ("甲", "乙", "丙")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and kb.revision == 3
    assert kb.info()["chunks"] == 45 and kb.info()["dense_coverage"] == 1.0


def test_no_wait_refuses_while_another_thread_writes(home: Path) -> None:
    kb = open_kb("k", create=True)
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with kb_lock(get_settings(), "k").hold():
            held.set()
            release.wait(10)

    t = threading.Thread(target=writer)
    t.start()
    try:
        assert held.wait(10)
        with pytest.raises(KnowledgeBaseBusy) as info:
            kb.index_documents(_docs(2), progress=False, wait=False)
        assert "正在被另一个导入任务写入" in info.value.message
    finally:
        release.set()
        t.join()
    assert kb.index_documents(_docs(2), progress=False, wait=False).revision == 1


def _cli() -> Callable[..., object]:
    from zhiwen.cli.main import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_ctrl_c_before_commit_removes_only_the_kb_this_run_created(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zhiwen.store.embedded import EmbeddedStore

    corpus = write_beir(tmp_path / "corpus", 5)
    zw = _cli()
    original = EmbeddedStore.upsert

    def interrupted(self: EmbeddedStore, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(EmbeddedStore, "upsert", interrupted)
    result = zw("index", "--kb", "new", "--format", "beir", str(corpus))
    assert result.exit_code == 130  # type: ignore[attr-defined]
    assert "本次新建的空知识库已删除" in result.stderr  # type: ignore[attr-defined]
    assert list_kbs() == []

    monkeypatch.setattr(EmbeddedStore, "upsert", original)
    assert zw("index", "--kb", "old", "--format", "beir", str(corpus)).exit_code == 0  # type: ignore[attr-defined]
    monkeypatch.setattr(EmbeddedStore, "upsert", interrupted)
    changed = write_beir(tmp_path / "changed", 6)
    result = zw("index", "--kb", "old", "--format", "beir", str(changed))
    assert result.exit_code == 130 and "知识库「old」保持原样" in result.stderr  # type: ignore[attr-defined]
    assert list_kbs() == ["old"] and open_kb("old").info()["chunks"] == 5


def test_batch_worker_order_errors_and_stop() -> None:
    emb = HashEmbedder(dim=16)
    batches = [["一", "二"], ["三"], ["四", "五"]]
    with BatchWorker(emb, batches) as worker:
        out = list(worker)
    assert [len(v) for v in out] == [2, 1, 2]
    np.testing.assert_allclose(out[2], emb.embed_passages(["四", "五"]))

    class Broken(HashEmbedder):
        def _passages(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError, match="model crashed"), BatchWorker(Broken(dim=16), batches) as worker:
        list(worker)

    seen: list[str] = []

    class Counting(HashEmbedder):
        def _passages(self, texts: list[str]) -> np.ndarray:
            seen.extend(texts)
            return super()._passages(texts)

    with BatchWorker(Counting(dim=16), [[str(i)] for i in range(100)]) as worker:
        for _ in worker:
            break  # stop after the first batch: the rest is cancelled
    assert len(seen) <= 3


def test_embed_chunks_commits_each_batch(home: Path) -> None:
    class FailsLate(HashEmbedder):
        calls = 0

        def _passages(self, texts: list[str]) -> np.ndarray:
            FailsLate.calls += 1
            if FailsLate.calls == 3:
                raise RuntimeError("killed")
            return super()._passages(texts)

    cache = EmbeddingCache(default_cache_dir(home))
    emb = FailsLate(dim=16)
    with pytest.raises(RuntimeError):
        embed_chunks(emb, [f"文本{i}" for i in range(10)], cache, batch_size=4)
    assert cache.count(emb.name) == 8  # the two finished batches survived
    _, n = embed_chunks(HashEmbedder(dim=16), [f"文本{i}" for i in range(10)], cache, batch_size=4)
    assert n == 2


def test_unknown_filter_field_lists_the_known_ones(home: Path) -> None:
    from zhiwen.errors import InvalidParameter

    kb = open_kb("k", create=True)
    docs = [
        Document(id=f"d{i}", text=f"第{i}道菜：番茄炒蛋", metadata={"category": "汤", "level": i})
        for i in range(3)
    ]
    kb.index_documents(docs, progress=False)
    assert kb.search("番茄炒蛋", filters={"category": "汤"}, mode="bm25")
    for call in (
        lambda: kb.search("第1段", filters={"categroy": "汤"}),
        lambda: kb.search_parents("第1段", filters={"categroy": "汤"}),
    ):
        with pytest.raises(InvalidParameter) as info:
            call()
        assert "未知的过滤字段：categroy" in info.value.message and "category" in info.value.message
        assert {"category", "level"} <= set(info.value.data["known_fields"])
    assert open_kb("empty", create=True).search("x", filters={"any": 1}) == []  # nothing to filter yet


def test_new_kb_is_stored_in_growing_slices(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zhiwen.kb import indexer
    from zhiwen.store.embedded import EmbeddedStore

    monkeypatch.setattr(indexer, "FIRST_SLICE", 4)
    sizes: list[int] = []
    original = EmbeddedStore.upsert

    def counting(self: EmbeddedStore, chunks: list[object], **kwargs: object) -> None:
        sizes.append(len(chunks))
        if len(sizes) == 3:
            raise KeyboardInterrupt  # Ctrl-C in the third slice
        original(self, chunks, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(EmbeddedStore, "upsert", counting)
    kb = open_kb("k", create=True)
    with pytest.raises(KeyboardInterrupt):
        kb.index_documents(_docs(30), progress=False)
    assert sizes == [4, 8, 16]
    assert kb.info()["chunks"] == 12 and kb.revision == 1  # two slices kept, with their revision
    assert kb.search("知识库1号", mode="bm25", top_k=1)

    monkeypatch.setattr(EmbeddedStore, "upsert", original)
    report = kb.index_documents(_docs(30), prune=True, progress=False)  # a KB with content: one upsert
    assert report.changed and kb.revision == 2 and kb.info()["chunks"] == 30


def test_server_start_resumes_missing_vectors(home: Path) -> None:
    from fastapi.testclient import TestClient

    from zhiwen.api.app import create_app
    from zhiwen.api.background import Background

    open_kb("k", create=True).index_documents(_docs(10), progress=False, dense="skip")
    app = create_app(get_settings(), background=Background(vectors=True))
    with TestClient(app) as client:  # the lifespan runs: the filler resumes every KB
        assert vector_filler().wait_idle(timeout=30)
        info = client.get("/api/v1/kbs/k").json()["data"]["info"]
        assert info["dense_coverage"] == 1.0 and info["vectors"] == 10
