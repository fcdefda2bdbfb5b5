"""Rerankers: score (query, passage) pairs more precisely than the retrievers.

* :class:`CrossEncoderReranker` — a sentence-transformers ``CrossEncoder`` loaded lazily (once,
  under a double-checked lock) from a model name or a local directory, e.g. a local copy of
  ``BAAI/bge-reranker-base``. Needs the optional extra ``pip install 'zhiwen[rerank]'``
  (sentence-transformers + torch; on CPU-only machines install ``torch`` from the CPU wheel
  index first). No Chinese cross-encoder ships on PyPI, so the tests build a tiny randomly
  initialised BERT cross-encoder on disk to exercise the real loading / batching / threshold
  code — its scores are meaningless, the plumbing is real.
* :class:`RemoteReranker` — the ``/rerank`` HTTP API of TEI (``{query, texts}`` →
  ``[{index, score}]``) and of Jina / Xinference / vLLM-compatible servers (``{model, query,
  documents, top_n}`` → ``{results: [{index, relevance_score}]}``); both response shapes are
  accepted.

Both are synchronous (``score``) with an async wrapper (``ascore``) that runs in the thread pool,
so the event loop never blocks. :func:`rerank_hits` applies one to search hits with the seed's
rules (candidate cap, threshold, fallback) and never raises: a failing reranker leaves the fused
order, logged and counted.

Under load and faults (:mod:`zhiwen.resilience`): a rerank gets ``rerank.timeout_s`` but never
more than what is left of the request's deadline; it runs in the ``rerank`` bulkhead behind the
reranker's circuit breaker. Whatever stops it — deadline (``timeout``), no slot (``busy``), open
breaker (``breaker_open``), missing model (``unavailable``), any error (``error``) — the hits keep
their fused order and :attr:`RerankOutcome.reason` says why.

**Offline model loading.** A cross-encoder is loaded only from disk: a local directory, or a hub
name already in the local Hugging Face cache (``models--org--name/snapshots/…``). Anything else
fails at once with a Chinese message naming ``ZHIWEN_RERANK__MODEL=/path/to/model`` — no hub
download is ever tried — and the failure is remembered (one check per configuration), so every
later search keeps the fused order at no cost and ``/healthz`` shows why.

Example::

    >>> reranker = get_reranker(settings.rerank)            # cached per configuration
    >>> outcome = rerank_hits(reranker, "怎么创建知识库", hits, candidates=50, threshold=0.5,
    ...                       fallback=2, top_k=5)
    >>> outcome.hits[0].rerank_score
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx2
from starlette.concurrency import run_in_threadpool

from zhiwen.cache import LRU
from zhiwen.config import RerankKnobs, RerankSettings
from zhiwen.documents import SearchHit
from zhiwen.errors import InvalidParameter, ZhiwenError
from zhiwen.metrics import FALLBACKS, RERANK_FAILURES, RERANK_LATENCY
from zhiwen.resilience import DependencyUnavailable, guard, note_degraded
from zhiwen.retry import (
    Deadline,
    DeadlineExceeded,
    DeadlineTransport,
    RetryPolicy,
    is_retryable_status,
    retry_call,
)

log = logging.getLogger(__name__)


class RerankerUnavailable(ZhiwenError):
    """The reranker cannot run (missing extra, model not found, endpoint down)."""

    code = 2002
    http_status = 503
    user_message = "重排模型不可用"


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, same order; higher = more relevant."""
        ...


class ConfiguredReranker(Reranker, Protocol):
    """A reranker built from the settings (:func:`get_reranker`): it also says whether it can run."""

    def check(self) -> object:
        """Fast, loads nothing: raise :class:`RerankerUnavailable` when it cannot run at all."""
        ...

    def status(self) -> dict[str, Any]:
        """What ``/healthz`` shows of it (``state`` and details)."""
        ...


class _AsyncMixin:
    async def ascore(self, query: str, texts: Sequence[str]) -> list[float]:
        return await run_in_threadpool(self.score, query, list(texts))  # type: ignore[attr-defined]


def _looks_like_path(name: str) -> bool:
    return (
        name.startswith(("/", "./", "../", "~"))
        or os.sep in name.strip("/").split("/", 1)[-1]
        or (len(name) > 2 and name[1] == ":")
    )


_MISSING_HINT = (
    "请把模型下载到本机目录，并设置 ZHIWEN_RERANK__MODEL=/path/to/model（或在管理接口修改 rerank.model）"
)


def _hub_caches() -> list[Path]:
    """Where a Hugging Face / sentence-transformers cache may hold models, most specific first."""
    from zhiwen.config.hub import hub_cache_dirs  # the environment is read in config/ only

    return hub_cache_dirs()


def resolve_local_model(name: str) -> Path | None:
    """The local directory of ``name`` (a path, or a hub name in a local cache), never the network."""
    if _looks_like_path(name):
        path = Path(name).expanduser()
        return path if path.exists() else None
    for root in _hub_caches():
        snapshots = root / f"models--{name.replace('/', '--')}" / "snapshots"
        if snapshots.is_dir():
            found = sorted((p for p in snapshots.iterdir() if (p / "config.json").exists()), reverse=True)
            if found:
                return found[0]
        legacy = root / name.replace("/", "_")  # sentence-transformers' own cache layout
        if (legacy / "config.json").exists():
            return legacy
    return None


class CrossEncoderReranker(_AsyncMixin):
    """sentence-transformers ``CrossEncoder(model, device=device)``, loaded on first use from disk."""

    def __init__(
        self, model: str, *, device: str = "cpu", batch_size: int = 8, max_length: int = 512
    ) -> None:
        self.model_name = model
        self.name = f"cross_encoder:{model}"
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self._model: Any = None
        self._failure: RerankerUnavailable | None = None  # remembered: no retry per search
        self._lock = threading.Lock()

    def check(self) -> Path:
        """The model's local directory, or :class:`RerankerUnavailable` — fast, never loads.

        A failure is remembered for this configuration (a settings change builds a new
        reranker, which checks again).
        """
        if self._failure is not None:
            raise self._failure
        local = resolve_local_model(self.model_name)
        if local is None:
            where = "目录不存在" if _looks_like_path(self.model_name) else "不在本机（离线模式不会下载）"
            self._failure = RerankerUnavailable(
                f"cross-encoder {self.model_name!r} not found on disk (no hub download is tried)",
                message=f"重排模型{where}：{self.model_name}。{_MISSING_HINT}",
            )
            raise self._failure
        if importlib.util.find_spec("sentence_transformers") is None:
            self._failure = RerankerUnavailable(
                "sentence-transformers is not installed; pip install 'zhiwen[rerank]'",
                message="重排模型不可用：未安装 sentence-transformers（pip install 'zhiwen[rerank]'）",
            )
            raise self._failure
        return local

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    local = self.check()
                    # belt and braces: nothing below may reach a hub, whatever the library does
                    from zhiwen.config.hub import keep_hub_offline

                    keep_hub_offline()
                    from sentence_transformers import CrossEncoder

                    t0 = time.perf_counter()
                    try:
                        self._model = CrossEncoder(str(local), device=self.device, max_length=self.max_length)
                    except Exception as exc:
                        self._failure = RerankerUnavailable(
                            f"cannot load cross-encoder {self.model_name!r} from {local}: {exc}",
                            message=f"重排模型加载失败：{self.model_name}。{_MISSING_HINT}",
                        )
                        raise self._failure from exc
                    log.info("cross-encoder %s loaded in %.1fs", self.model_name, time.perf_counter() - t0)
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def status(self) -> dict[str, Any]:
        """For ``/healthz``: ready, not_loaded (loads at first use) or unavailable (and why)."""
        if self._model is not None:
            return {"state": "ready"}
        try:
            self.check()
        except RerankerUnavailable as exc:
            return {"state": "unavailable", "message": exc.message}
        return {"state": "not_loaded"}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        model = self._load()
        pairs = [(query, t) for t in texts]
        scores = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) for s in list(scores)]


#: the embedding client's retry policy (:mod:`zhiwen.embed.openai_compat`), within the deadline
REMOTE_RETRY = RetryPolicy(max_retries=2, backoff_base_s=0.2, backoff_max_s=2.0)


def _retryable(exc: BaseException) -> bool:
    """A connection error, a timeout or a retryable status (:func:`zhiwen.retry.is_retryable_status`)."""
    if isinstance(exc, httpx2.HTTPStatusError):
        return is_retryable_status(exc.response.status_code)
    return isinstance(exc, httpx2.TransportError)


class RemoteReranker(_AsyncMixin):
    """Client of a ``/rerank`` endpoint (TEI or Jina/Xinference style, see module doc).

    ``endpoint`` is the full URL (``http://host:8080/rerank`` or ``…/v1/rerank``). Each batch is
    retried (:data:`REMOTE_RETRY`) on connection errors, timeouts, 429 and 5xx answers, and never
    past the score's deadline (``timeout_s``, or what is left of the request's).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 32,
        client: httpx2.Client | None = None,
    ) -> None:
        if not endpoint or not endpoint.startswith(("http://", "https://")):
            raise InvalidParameter(f"bad rerank endpoint {endpoint!r}", message="重排服务地址无效")
        self.endpoint = endpoint
        self.model = model
        self.name = f"remote:{endpoint}"
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # reads stop at the deadline of the calling worker (a dripping server cannot hold us)
        self._client = client or httpx2.Client(
            transport=DeadlineTransport(), timeout=timeout_s, headers=headers
        )

    def _payload(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        # both dialects in one body: TEI reads query/texts, Jina/Xinference read documents/model
        payload: dict[str, Any] = {"query": query, "texts": list(texts), "documents": list(texts)}
        payload["top_n"] = len(texts)
        payload["return_text"] = False
        if self.model:
            payload["model"] = self.model
        return payload

    @staticmethod
    def parse(body: Any, n: int) -> list[float]:
        """``[{index, score}]`` (TEI) or ``{results: [{index, relevance_score}]}`` → n scores."""
        items = body.get("results", body.get("data")) if isinstance(body, dict) else body
        if not isinstance(items, list):
            raise ValueError(f"unexpected rerank response: {str(body)[:200]}")
        scores: list[float | None] = [None] * n
        for item in items:
            idx = item.get("index")
            value = item.get("score", item.get("relevance_score"))
            if not isinstance(idx, int) or not 0 <= idx < n or not isinstance(value, int | float):
                raise ValueError(f"bad rerank item {item!r}")
            scores[idx] = float(value)
        if any(s is None for s in scores):
            raise ValueError("rerank response misses some documents")
        return [float(s) for s in scores if s is not None]

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        out: list[float] = []
        deadline = Deadline.within(self.timeout_s)
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                resp = retry_call(
                    partial(self._post, query, batch, deadline),
                    deadline=deadline,
                    policy=REMOTE_RETRY,
                    retryable=_retryable,
                    label="rerank",
                )
                out.extend(self.parse(resp.json(), len(batch)))
            except (httpx2.HTTPError, ValueError) as exc:
                raise RerankerUnavailable(
                    f"rerank endpoint failed: {exc}", message="重排服务调用失败"
                ) from exc
        return out

    def _post(self, query: str, batch: list[str], deadline: Deadline) -> httpx2.Response:
        """One attempt at one batch; an error status raises (so it can be retried)."""
        resp = self._client.post(
            self.endpoint, json=self._payload(query, batch), timeout=deadline.http_timeout()
        )
        resp.raise_for_status()
        return resp

    def check(self) -> None:
        """Nothing to check before a call: an endpoint is judged by its answers (and its breaker)."""

    def status(self) -> dict[str, Any]:
        return {"state": "remote", "endpoint": self.endpoint}

    def close(self) -> None:
        self._client.close()


# -- factory -----------------------------------------------------------------------------------
_CACHE: LRU[ConfiguredReranker] = LRU(8, "rerankers")
_CACHE_LOCK = threading.Lock()  # one reranker per configuration: look up and build as one step


def get_reranker(cfg: RerankKnobs, *, api_key: str | None = None) -> ConfiguredReranker:
    """Reranker for a rerank settings object (static ``RerankSettings`` or the dynamic one).

    ``api_key`` (remote backend) defaults to ``cfg.api_key``; the runtime settings never hold
    secrets, so the API passes the static one.

    Cached per (backend, model, device, endpoint, batch size), so the model loads once and a
    runtime settings change to another model builds a new one.
    """
    backend = cfg.backend
    key = (backend, cfg.model, cfg.device, cfg.endpoint, cfg.batch_size, cfg.timeout_s)
    with _CACHE_LOCK:
        reranker: ConfiguredReranker | None = _CACHE.get(key)
        if reranker is None:
            if backend == "remote":
                reranker = RemoteReranker(
                    cfg.endpoint or "",
                    model=cfg.model,
                    # the static settings hold the key; the runtime ones never hold secrets
                    api_key=api_key or (cfg.api_key if isinstance(cfg, RerankSettings) else None),
                    timeout_s=cfg.timeout_s,
                    batch_size=max(cfg.batch_size, 1),
                )
            elif backend == "cross_encoder":
                reranker = CrossEncoderReranker(cfg.model, device=cfg.device, batch_size=cfg.batch_size)
            else:
                raise InvalidParameter(
                    f"unknown rerank backend {backend!r}", message=f"未知的重排后端：{backend}"
                )
            _CACHE.put(key, reranker)
        return reranker


def clear_reranker_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


# -- applying a reranker to hits ---------------------------------------------------------------
@dataclass(slots=True)
class RerankOutcome:
    """What :func:`rerank_hits` did; ``hits`` are ordered and cut to ``top_k``."""

    hits: list[SearchHit]
    reranked: bool = False
    candidates: int = 0
    passed: int = 0
    fallback: bool = False
    error: str | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    # why the fused order was kept: timeout | busy | breaker_open | unavailable | error
    reason: str | None = None


_REASON_WARNINGS = {
    "timeout": "重排超时，已使用融合排序",
    "busy": "重排繁忙，已使用融合排序",
    "breaker_open": "重排服务暂时不可用（熔断中），已使用融合排序",
    "unavailable": "重排模型不可用，已使用融合排序",
    "error": "重排失败，已使用融合排序",
}


def _fused_order(
    outcome: RerankOutcome, hits: Sequence[SearchHit], keep: int, reason: str, exc: BaseException | None
) -> RerankOutcome:
    """The seed's failure rule: keep the fused order, cut to ``keep``; say why."""
    if reason in ("error", "timeout"):
        RERANK_FAILURES.inc()
    FALLBACKS.labels(kind=f"rerank_{reason}").inc()
    note_degraded("rerank", reason)
    if exc is not None:
        log.warning(
            "reranker %s, keeping fused order: %s", reason, exc, exc_info=log.isEnabledFor(logging.DEBUG)
        )
        outcome.error = exc.message if isinstance(exc, ZhiwenError) else f"{type(exc).__name__}: {exc}"
    outcome.reason = reason
    outcome.hits = list(hits[:keep])
    outcome.passed = len(outcome.hits)
    outcome.warnings.append(_REASON_WARNINGS[reason])
    return outcome


def _score(model: Reranker, query: str, texts: list[str], timeout_s: float) -> list[float]:
    """``model.score`` under its deadline, in the ``rerank`` bulkhead behind its breaker."""
    deadline = Deadline.within(timeout_s)
    if deadline.expired:
        raise DeadlineExceeded("no time left within the request's deadline")
    with guard("rerank", model.name, deadline) as call:
        try:
            scores = deadline.run(lambda: model.score(query, texts))
            if len(scores) != len(texts) or not all(math.isfinite(s) for s in scores):
                raise ValueError(f"reranker returned {len(scores)} scores for {len(texts)} texts (or NaN)")
        except Exception as exc:
            call.failed(exc)
            raise
        call.succeeded()
        return scores


def rerank_hits(
    reranker: Reranker | Callable[[], Reranker],
    query: str,
    hits: Sequence[SearchHit],
    *,
    candidates: int,
    threshold: float,
    fallback: int,
    top_k: int,
    keep: int | None = None,
    timeout_s: float = 30.0,
) -> RerankOutcome:
    """Seed 004 §3.2-3.3: rerank the first ``candidates`` hits, keep those ``>= threshold``.

    * scores go to ``rerank_score`` and ``score`` (the fused score stays in ``fused_score``);
    * nothing passes → the first ``min(fallback, top_k)`` hits in their *original* (fused) order,
      with a warning (``FALLBACKS{kind="rerank_threshold"}``);
    * the reranker raises (missing model, endpoint down, bad output), runs past ``timeout_s`` or
      the request's deadline, finds its bulkhead full or its breaker open → the fused order, cut
      to ``keep``, logged and counted (``FALLBACKS{kind="rerank_<reason>"}``), ``reason`` set.

    ``reranker`` may be a zero-argument factory, so a failure to *build* one also falls back.
    ``keep`` (default ``top_k``) is how many passing hits to return, for callers that diversify
    or limit per document afterwards; the fallback count is always ``min(fallback, top_k)``.
    """
    keep = top_k if keep is None else keep
    pool = list(hits[: max(candidates, 0)])
    outcome = RerankOutcome(hits=[], candidates=len(pool))
    if not pool:
        return outcome
    t0 = time.perf_counter()
    model: Reranker | None = None
    try:
        model = reranker() if callable(reranker) and not isinstance(reranker, Reranker) else reranker
        assert isinstance(model, Reranker)
        if isinstance(model, CrossEncoderReranker):
            model.check()  # a remembered missing model: fused order at once, nothing waits
        scores = _score(model, query, [h.chunk.text for h in pool], timeout_s)
    except Exception as exc:
        outcome.seconds = time.perf_counter() - t0
        if isinstance(exc, DependencyUnavailable):
            reason = exc.reason
        elif isinstance(exc, DeadlineExceeded):
            reason = "timeout"
        elif isinstance(exc, RerankerUnavailable) and isinstance(model, CrossEncoderReranker):
            reason = "unavailable"
        else:
            reason = "error"
        return _fused_order(outcome, hits, keep, reason, exc)
    outcome.seconds = time.perf_counter() - t0
    RERANK_LATENCY.observe(outcome.seconds)
    outcome.reranked = True
    scored = [replace(h, rerank_score=s, score=s) for h, s in zip(pool, scores, strict=True)]
    ranked = sorted(scored, key=lambda h: -float(h.rerank_score or 0.0))
    passed = [h for h in ranked if (h.rerank_score or 0.0) >= threshold]
    outcome.passed = len(passed)
    if passed:
        outcome.hits = passed[:keep]
        return outcome
    n = min(fallback, top_k)
    if n > 0:
        FALLBACKS.labels(kind="rerank_threshold").inc()
        log.warning(
            "no chunk met rerank threshold %.3f (best %.3f); returning %d fallback chunk(s)",
            threshold,
            ranked[0].rerank_score or 0.0,
            n,
        )
        outcome.fallback = True
        # in the fused order: scores below the threshold are not trusted to order the fallback
        outcome.hits = scored[:n]
        outcome.warnings.append(f"没有片段达到重排阈值 {threshold:g}，返回 {n} 条兜底结果")
    return outcome
