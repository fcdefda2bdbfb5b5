"""On-disk embedding cache: hits, misses, namespaces by model, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zhiwen.documents import Chunk, content_hash
from zhiwen.embed import EmbeddingCache, HashEmbedder, embed_chunks
from zhiwen.metrics import EMBED_CACHE_HITS


class CountingEmbedder(HashEmbedder):
    def __init__(self, dim: int = 32) -> None:
        super().__init__(dim=dim)
        self.seen: list[str] = []

    def _passages(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super()._passages(texts)


def test_unchanged_texts_are_never_reembedded(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    cache = EmbeddingCache(tmp_path / "c")
    texts = ["甲", "乙", "丙", "甲"]
    v1, n1 = embed_chunks(emb, texts, cache, batch_size=2)
    assert n1 == 3 and emb.seen == ["甲", "乙", "丙"]  # the duplicate is embedded once
    hits_before = EMBED_CACHE_HITS._value.get()
    v2, n2 = embed_chunks(emb, ["丙", "丁", "甲"], cache)
    assert n2 == 1 and emb.seen[-1] == "丁"
    assert EMBED_CACHE_HITS._value.get() - hits_before == 2
    np.testing.assert_array_equal(v2[0], v1[2])
    np.testing.assert_array_equal(v2[2], v1[0])
    np.testing.assert_allclose(v2, emb.embed_passages(["丙", "丁", "甲"]), rtol=1e-6)


def test_cache_persists_and_is_keyed_by_model(tmp_path: Path) -> None:
    small, big = CountingEmbedder(16), CountingEmbedder(32)
    with EmbeddingCache(tmp_path) as cache:
        embed_chunks(small, ["文本"], cache)
    with EmbeddingCache(tmp_path) as cache:
        _, n_same = embed_chunks(small, ["文本"], cache)
        _, n_other = embed_chunks(big, ["文本"], cache)
        assert (n_same, n_other) == (0, 1)
        assert cache.count(small.name) == 1 and cache.count() == 2


def test_get_put_many_api(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, model="m")
    vecs = {content_hash(t): np.full(4, i, dtype=np.float32) for i, t in enumerate(["a", "b"])}
    cache.put_many(vecs)
    got = cache.get_many([content_hash("a"), content_hash("zzz"), content_hash("b")])
    assert set(got) == set(vecs)
    np.testing.assert_array_equal(got[content_hash("b")], vecs[content_hash("b")])
    assert EmbeddingCache(tmp_path).get_many(list(vecs), model="other") == {}
    with pytest.raises(ValueError):
        EmbeddingCache(tmp_path).get_many(["x"])


def test_chunk_hash_matches_embed_text(tmp_path: Path) -> None:
    chunk = Chunk(id="d#0", doc_id="d", text="## 操作\n- 炒", title="宫保鸡丁的做法")
    emb = CountingEmbedder()
    cache = EmbeddingCache(tmp_path)
    embed_chunks(emb, [chunk.embed_text], cache)
    assert chunk.content_hash in cache.get_many([chunk.content_hash], model=emb.name)


def test_empty_input(tmp_path: Path) -> None:
    vecs, n = embed_chunks(CountingEmbedder(), [], EmbeddingCache(tmp_path))
    assert vecs.shape == (0, 32) and n == 0
    vecs, n = embed_chunks(CountingEmbedder(), ["x"], None)
    assert vecs.shape == (1, 32) and n == 1
