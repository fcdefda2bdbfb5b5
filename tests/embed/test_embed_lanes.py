"""Bounded embedding work (#29): queries have their own lane, a deadline stops a batch between
slices, inputs are cut to ``embedding.max_input_chars``, and a search whose query cannot be
embedded in time answers with BM25 and says so.

A fake model records what it did; the tests assert the order of events, never wall-clock latency
(that is ``bench/bench_embed_lanes.py``'s).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from zhiwen.config import EmbeddingSettings, Settings
from zhiwen.documents import Document
from zhiwen.embed import get_embedder
from zhiwen.embed._common import BaseEmbedder
from zhiwen.embed.lanes import EmbeddingBusy, EmbeddingTimeout, ModelLanes, slices
from zhiwen.resilience import degraded_scope
from zhiwen.retry import Deadline, deadline_scope


class FakeModel(BaseEmbedder):
    """A model whose passage slices block until released (or sleep), with an event log."""

    provider = "fake"
    name = "fake"
    dim = 4

    def __init__(self, *, slice_s: float = 0.0) -> None:
        self.lanes = ModelLanes("fake")
        self.slice_texts = 1
        self.events: list[str] = []
        self.seen: list[str] = []
        self.slice_s = slice_s
        self.in_slice = threading.Event()
        self.release = threading.Event()
        if slice_s:
            self.release.set()

    def _passages(self, texts: list[str]) -> np.ndarray:
        self.events.append("passage-start")
        self.seen.extend(texts)
        self.in_slice.set()
        self.release.wait(10)
        time.sleep(self.slice_s)
        self.events.append("passage-end")
        return np.ones((len(texts), self.dim), dtype=np.float32)

    def _query(self, text: str) -> np.ndarray:
        self.events.append("query")
        self.seen.append(text)
        return np.ones(self.dim, dtype=np.float32)


def test_a_query_does_not_wait_for_a_running_passage_batch() -> None:
    model = FakeModel()
    batch = threading.Thread(target=model.embed_passages, args=(["段落"] * 5,))
    batch.start()
    assert model.in_slice.wait(5)  # the batch is inside the model, and stays there
    model.embed_query("怎么创建知识库")
    assert model.events == ["passage-start", "query"]  # answered while the slice still runs
    model.release.set()
    batch.join(5)
    assert model.events.count("passage-end") == 5


def test_a_query_waits_for_its_lane_at_most_until_the_deadline() -> None:
    model = FakeModel()
    assert model.lanes is not None
    held = threading.Event()
    done = threading.Event()

    def hold_query_lane() -> None:
        assert model.lanes is not None
        with model.lanes.query():
            held.set()
            done.wait(5)

    holder = threading.Thread(target=hold_query_lane)
    holder.start()
    held.wait(5)
    try:
        with degraded_scope() as record, deadline_scope(0.2), pytest.raises(EmbeddingBusy) as caught:
            model.embed_query("问题")
        assert record.items() == {"embedding": "busy"}
        assert "繁忙" in caught.value.message and caught.value.http_status == 503
    finally:
        done.set()
        holder.join(5)
    assert "query" not in model.events


def test_the_deadline_stops_a_long_batch_between_slices() -> None:
    model = FakeModel(slice_s=0.02)
    with degraded_scope() as record, deadline_scope(0.2), pytest.raises(EmbeddingTimeout) as caught:
        model.embed_passages([f"段落{i}" for i in range(500)])
    done = model.events.count("passage-end")
    assert 0 < done < 500
    assert caught.value.data == {"done": done, "total": 500}
    assert f"{done}/500" in caught.value.message
    assert record.items() == {"embedding": "timeout"}


def test_a_cancelled_deadline_stops_the_batch_at_the_next_slice() -> None:
    model = FakeModel()
    errors: list[BaseException] = []
    cancel: list[Deadline] = []

    def run() -> None:
        with deadline_scope(60) as deadline:
            cancel.append(deadline)
            try:
                model.embed_passages(["段落"] * 1000)
            except EmbeddingTimeout as exc:
                errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert model.in_slice.wait(5)
    cancel[0].cancel()  # what the route does when its client hangs up
    model.release.set()
    worker.join(5)
    assert len(errors) == 1
    assert model.events.count("passage-start") == 1  # the slice in flight finished, no other began


def test_inputs_are_cut_to_the_cap_everywhere() -> None:
    model = FakeModel()
    model.release.set()
    model.max_input_chars = 10
    model.embed_passages(["长" * 50, "短"])
    model.embed_query("问" * 50)
    assert model.seen == ["长" * 10, "短", "问" * 10]


def test_get_embedder_applies_the_settings_caps() -> None:
    cfg = EmbeddingSettings(provider="hash", max_input_chars=100, slice_texts=3, slice_chars=500)
    emb = get_embedder("hash", cfg)
    assert isinstance(emb, BaseEmbedder)
    assert (emb.max_input_chars, emb.slice_texts, emb.slice_chars) == (100, 3, 500)
    a = emb.embed_passages(["知" * 100 + "识库"])  # the tail past the cap does not count
    np.testing.assert_allclose(a[0], emb.embed_passages(["知" * 100])[0])


def test_slices_bound_texts_and_characters() -> None:
    texts = ["a" * 3, "b" * 3, "c" * 3, "d" * 10, "e"]
    assert list(slices(texts, 2, 100)) == [(0, 2), (2, 4), (4, 5)]
    assert list(slices(texts, 10, 6)) == [(0, 2), (2, 3), (3, 4), (4, 5)]  # a long text alone
    assert list(slices([], 4, 4)) == []


def test_a_search_whose_query_lane_is_busy_answers_with_bm25(tmp_path: Path) -> None:
    from zhiwen.kb import open_kb

    settings = Settings(home=tmp_path, embedding={"provider": "hash"}, _env_file=None)
    kb = open_kb("lanes", settings=settings, create=True, embedder="hash")
    kb.index_documents(
        [Document(id="a", title="创建知识库", text="在设置页面点击新建，即可创建知识库。")], progress=False
    )
    real = kb.real_embedder()
    assert isinstance(real, BaseEmbedder)
    real.lanes = ModelLanes("test")
    busy = threading.Event()
    done = threading.Event()

    def hold_query_lane() -> None:
        assert real.lanes is not None
        with real.lanes.query():
            busy.set()
            done.wait(5)

    holder = threading.Thread(target=hold_query_lane)
    holder.start()
    busy.wait(5)
    try:
        with degraded_scope() as record, deadline_scope(0.3):
            result = kb.search_detailed("怎么创建知识库", mode="hybrid")
    finally:
        done.set()
        holder.join(5)
        kb.close()
    assert result.hits and result.hits[0].chunk.doc_id == "a"
    assert result.branch_status["dense"].startswith("failed: EmbeddingBusy")
    assert record.items() == {"embedding": "busy"}  # the response's X-Zhiwen-Degraded
