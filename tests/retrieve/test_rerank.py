"""Rerank (seed 004 §3): threshold, fallback, failure → fused order; remote /rerank; a real tiny
cross-encoder built on disk (no Chinese cross-encoder ships on PyPI, and tests have no network).

The cross-encoder tests need the optional extra ``zhiwen[rerank]`` (sentence-transformers +
torch) and are skipped with a reason without it.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from zhiwen.documents import Chunk, SearchHit
from zhiwen.metrics import FALLBACKS, RERANK_FAILURES
from zhiwen.retrieve.rerank import (
    CrossEncoderReranker,
    RemoteReranker,
    RerankerUnavailable,
    clear_reranker_cache,
    get_reranker,
    rerank_hits,
)


def make_hits(n: int) -> list[SearchHit]:
    hits = []
    for i in range(n):
        chunk = Chunk(id=f"d{i // 2}#{i}", doc_id=f"d{i // 2}", text=f"第{i}段 文本 {'丁' * (i + 1)}")
        hits.append(SearchHit(chunk=chunk, score=1.0 - i / 100, fused_score=1.0 - i / 100))
    return hits


class Fixed:
    name = "fixed"

    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return self.scores[: len(texts)]


class Broken:
    name = "broken"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("CUDA out of memory")


def _counter(c: Any, **labels: str) -> float:
    return float((c.labels(**labels) if labels else c)._value.get())


# -- pipeline with a fixed fake model (seed 004 §3.4) -------------------------------------------
def test_threshold_filters_and_sorts() -> None:
    hits = make_hits(4)
    out = rerank_hits(
        Fixed([0.2, 0.9, 0.6, 0.1]), "q", hits, candidates=50, threshold=0.5, fallback=2, top_k=10
    )
    assert [h.chunk.id for h in out.hits] == [hits[1].chunk.id, hits[2].chunk.id]
    assert [h.rerank_score for h in out.hits] == [0.9, 0.6]
    assert out.hits[0].fused_score == hits[1].fused_score  # the fused score is kept
    assert out.reranked and out.passed == 2 and not out.fallback
    assert hits[1].rerank_score is None  # inputs are not mutated


def test_seed_fake_scores_fallback() -> None:
    before = _counter(FALLBACKS, kind="rerank_threshold")
    hits = make_hits(5)
    out = rerank_hits(
        Fixed([0.9, 0.2, 0.1, 0.3, 0.2]), "q", hits, candidates=5, threshold=0.95, fallback=2, top_k=3
    )
    assert out.fallback and out.passed == 0
    assert [h.chunk.id for h in out.hits] == [hits[0].chunk.id, hits[1].chunk.id]  # fused order
    assert out.hits[1].rerank_score == 0.2
    assert _counter(FALLBACKS, kind="rerank_threshold") == before + 1
    assert out.warnings


def test_fallback_is_min_of_fallback_and_top_k() -> None:
    out = rerank_hits(Fixed([0.0] * 5), "q", make_hits(5), candidates=5, threshold=1, fallback=2, top_k=1)
    assert len(out.hits) == 1
    out = rerank_hits(Fixed([0.0] * 5), "q", make_hits(5), candidates=5, threshold=1, fallback=0, top_k=3)
    assert out.hits == [] and not out.fallback


def test_candidates_cap_and_top_k_and_keep() -> None:
    fake = Fixed([0.9] * 10)
    out = rerank_hits(fake, "q", make_hits(10), candidates=3, threshold=0.5, fallback=2, top_k=2)
    assert out.candidates == 3 and out.passed == 3 and len(out.hits) == 2
    out = rerank_hits(fake, "q", make_hits(10), candidates=6, threshold=0.5, fallback=2, top_k=2, keep=5)
    assert len(out.hits) == 5


@pytest.mark.parametrize(
    "model",
    [
        Broken(),
        Fixed([0.5]),
        Fixed([float("nan")] * 4),
        lambda: (_ for _ in ()).throw(RerankerUnavailable("x")),
    ],
)
def test_any_reranker_error_keeps_fused_order(model: Any) -> None:
    before = (_counter(RERANK_FAILURES), _counter(FALLBACKS, kind="rerank_error"))
    hits = make_hits(4)
    out = rerank_hits(model, "q", hits, candidates=50, threshold=0.5, fallback=2, top_k=3)
    assert [h.chunk.id for h in out.hits] == [h.chunk.id for h in hits[:3]]
    assert not out.reranked and out.error
    assert all(h.rerank_score is None for h in out.hits)
    assert _counter(RERANK_FAILURES) == before[0] + 1
    assert _counter(FALLBACKS, kind="rerank_error") == before[1] + 1


def test_empty_input() -> None:
    out = rerank_hits(Broken(), "q", [], candidates=5, threshold=0.5, fallback=2, top_k=3)
    assert out.hits == [] and out.error is None


def test_missing_local_path_never_downloads(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(str(tmp_path / "absent-model"))
    with pytest.raises(RerankerUnavailable, match="不存在"):
        reranker.score("q", ["a"])


def test_factory_caches_per_configuration() -> None:
    from zhiwen.config import RerankSettings

    clear_reranker_cache()
    a = get_reranker(RerankSettings(model="/m/a"))
    assert get_reranker(RerankSettings(model="/m/a")) is a
    assert get_reranker(RerankSettings(model="/m/b")) is not a
    remote = get_reranker(RerankSettings(backend="remote", endpoint="http://127.0.0.1:9/rerank"))
    assert isinstance(remote, RemoteReranker)
    clear_reranker_cache()


# -- remote /rerank against a local fake server -------------------------------------------------
class _RerankHandler(BaseHTTPRequestHandler):
    requests: list[tuple[str, dict[str, Any], str | None]] = []  # noqa: RUF012

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body, self.headers.get("Authorization")))
        docs = body.get("texts") or body.get("documents")
        scores = [len(set(body["query"]) & set(d)) / 10 for d in docs]
        order = sorted(range(len(docs)), key=lambda i: -scores[i])
        if self.path == "/tei/rerank":
            out: Any = [{"index": i, "score": scores[i]} for i in order]
        elif self.path == "/v1/rerank":
            out = {
                "model": body.get("model"),
                "results": [{"index": i, "relevance_score": scores[i]} for i in order],
            }
        elif self.path == "/garbage":
            out = {"foo": 1}
        else:
            self.send_response(500)
            self.end_headers()
            return
        payload = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def rerank_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path", ["/tei/rerank", "/v1/rerank"])
def test_remote_both_dialects(rerank_server: str, path: str) -> None:
    reranker = RemoteReranker(rerank_server + path, model="bge-reranker", api_key="k", batch_size=2)
    texts = ["宫保鸡丁", "鸡丁宫保做法", "红烧肉", "宫"]
    scores = reranker.score("宫保鸡丁", texts)
    assert scores == [0.4, 0.4, 0.0, 0.1]  # in input order, whatever order the server answered
    path_seen, body, auth = _RerankHandler.requests[-1]
    assert path_seen == path and auth == "Bearer k"
    assert body["model"] == "bge-reranker" and len(body["texts"]) == 2  # batched by 2
    reranker.close()


@pytest.mark.parametrize("path", ["/fail", "/garbage"])
def test_remote_errors_become_fallback(rerank_server: str, path: str) -> None:
    reranker = RemoteReranker(rerank_server + path)
    with pytest.raises(RerankerUnavailable):
        reranker.score("q", ["a"])
    out = rerank_hits(reranker, "q", make_hits(3), candidates=5, threshold=0.1, fallback=2, top_k=2)
    assert not out.reranked and len(out.hits) == 2


def test_remote_unreachable_and_bad_url() -> None:
    from zhiwen.errors import InvalidParameter

    with pytest.raises(InvalidParameter):
        RemoteReranker("ftp://x")
    reranker = RemoteReranker("http://127.0.0.1:9/rerank", timeout_s=1)
    with pytest.raises(RerankerUnavailable):
        reranker.score("q", ["a"])


def _scripted(statuses: list[int]) -> tuple[RemoteReranker, list[int]]:
    """A reranker whose endpoint answers each request with the next status (200: scores)."""
    import httpx2

    from zhiwen.retry import DeadlineTransport

    seen: list[int] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        status = statuses[min(len(seen), len(statuses) - 1)]
        seen.append(status)
        if status != 200:
            return httpx2.Response(status, json={"error": "busy"})
        n = len(json.loads(request.content)["texts"])
        return httpx2.Response(200, json=[{"index": i, "score": float(i)} for i in range(n)])

    client = httpx2.Client(transport=DeadlineTransport(httpx2.MockTransport(answer)))
    return RemoteReranker("http://rerank.test/rerank", timeout_s=10, client=client), seen


def test_remote_retries_a_busy_endpoint_within_its_deadline() -> None:
    reranker, seen = _scripted([503, 429, 200])
    assert reranker.score("q", ["a", "b"]) == [0.0, 1.0] and seen == [503, 429, 200]
    always_busy, seen = _scripted([503])
    with pytest.raises(RerankerUnavailable):
        always_busy.score("q", ["a"])
    assert seen == [503, 503, 503]  # the first attempt and two retries
    not_found, seen = _scripted([404])
    with pytest.raises(RerankerUnavailable):
        not_found.score("q", ["a"])
    assert seen == [404]  # the same request fails the same way: never retried


def test_parse_rejects_partial() -> None:
    with pytest.raises(ValueError):
        RemoteReranker.parse([{"index": 0, "score": 1.0}], 2)
    with pytest.raises(ValueError):
        RemoteReranker.parse([{"index": 5, "score": 1.0}], 1)
    assert RemoteReranker.parse({"data": [{"index": 0, "relevance_score": 2}]}, 1) == [2.0]


def test_async_wrapper_runs_in_threadpool(rerank_server: str) -> None:
    import anyio

    reranker = RemoteReranker(rerank_server + "/tei/rerank")
    main = threading.get_ident()
    seen: list[int] = []
    real_score = reranker.score

    def spy(query: str, texts: Sequence[str]) -> list[float]:
        seen.append(threading.get_ident())
        return real_score(query, texts)

    reranker.score = spy  # type: ignore[method-assign]
    assert anyio.run(reranker.ascore, "宫", ["宫", "x"]) == [0.1, 0.0]
    assert seen and seen[0] != main  # the event loop thread never ran the model


# -- a real, tiny, randomly initialised cross-encoder ---------------------------------------------
HAS_ST = importlib.util.find_spec("sentence_transformers") is not None and importlib.util.find_spec("torch")
needs_st = pytest.mark.skipif(
    not HAS_ST,
    reason="optional extra zhiwen[rerank] (sentence-transformers + torch) not installed: "
    "bash scripts/test.sh --with rerank",
)


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, hidden-32 BERT sequence classifier + WordPiece vocab, saved like a hub model."""
    if not HAS_ST:
        pytest.skip("optional extra zhiwen[rerank] not installed: bash scripts/test.sh --with rerank")
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 400)] + list("abcdefghijklmnopqrstuvwxyz0123456789")
    extra = list("宫保鸡丁做法红烧肉安装失败检索第段文本")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(chars + extra)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab_file=str(path / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.5,  # spread the random scores so thresholds cut somewhere
    )
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@needs_st
def test_cross_encoder_lazy_load_batching_threshold(tiny_cross_encoder: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), batch_size=2, max_length=64)
    assert not reranker.loaded
    hits = make_hits(7)
    texts = [h.chunk.text for h in hits]
    scores = reranker.score("宫保鸡丁怎么做", texts)
    assert reranker.loaded and len(scores) == 7 and len(set(scores)) > 1
    # batching does not change the scores
    one_batch = CrossEncoderReranker(str(tiny_cross_encoder), batch_size=64, max_length=64)
    assert one_batch.score("宫保鸡丁怎么做", texts) == pytest.approx(scores, abs=1e-5)

    threshold = sorted(scores)[len(scores) // 2]  # the median: about half pass
    out = rerank_hits(
        reranker, "宫保鸡丁怎么做", hits, candidates=50, threshold=threshold, fallback=2, top_k=10
    )
    expected = sorted((s for s in scores if s >= threshold), reverse=True)
    assert [h.rerank_score for h in out.hits] == pytest.approx(expected)
    assert 0 < out.passed < 7 and not out.fallback

    out = rerank_hits(
        reranker, "宫保鸡丁怎么做", hits, candidates=50, threshold=max(scores) + 1, fallback=2, top_k=5
    )
    assert out.fallback and [h.chunk.id for h in out.hits] == [hits[0].chunk.id, hits[1].chunk.id]


@needs_st
def test_cross_encoder_loads_once_under_concurrency(tiny_cross_encoder: Path, monkeypatch: Any) -> None:
    import sentence_transformers

    real = sentence_transformers.CrossEncoder
    calls: list[str] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(sentence_transformers, "CrossEncoder", counting)
    reranker = CrossEncoderReranker(str(tiny_cross_encoder))
    results: list[list[float]] = []
    threads = [
        threading.Thread(target=lambda: results.append(reranker.score("q", ["宫保", "鸡丁"])))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 4
    assert all(r == pytest.approx(results[0]) for r in results)


@needs_st
def test_cross_encoder_bad_model_dir_falls_back(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")  # exists but is no model
    reranker = CrossEncoderReranker(str(tmp_path))
    out = rerank_hits(reranker, "q", make_hits(3), candidates=5, threshold=0.0, fallback=2, top_k=2)
    assert not out.reranked and "重排模型加载失败" in (out.error or "")
