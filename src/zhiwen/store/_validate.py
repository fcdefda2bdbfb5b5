"""Validation of what callers hand a store, shared by the backends: before any write starts.

* :func:`check_batch` — one upsert batch (ids, token lists, optional vectors);
* :func:`check_vector_rows` — the ids and vectors of :meth:`~zhiwen.store.base.Store.set_vectors`;
* :func:`dump_metadata` — metadata as canonical JSON (or a clear error);
* :func:`check_text_options` — ``search_text`` keywords the backend's features do not offer.

Everything raises :class:`~zhiwen.errors.InvalidParameter` with a Chinese message, so a bad
batch never reaches a transaction. Vectors come back L2-normalised float32 (cosine = dot).

Example::

    vecs = check_batch(chunks, tokens, vectors, dim=384)      # None when vectors is None
    ids, vecs = check_vector_rows(["a#0", "a#1"], vectors, dim=384)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter
from zhiwen.store._vectors import normalize_rows

if TYPE_CHECKING:
    from zhiwen.store.base import StoreFeatures


def dump_metadata(metadata: dict[str, Any], owner: str) -> str:
    try:
        return json.dumps(metadata, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParameter(
            f"metadata of {owner!r} is not JSON-serialisable: {exc}", message=f"元数据无法保存：{owner}"
        ) from exc


def _check_matrix(vectors: np.ndarray, n: int, dim: int | None) -> np.ndarray:
    if dim is None:
        raise InvalidParameter("this store was created without vectors", message="该知识库未配置向量维度")
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape != (n, dim):
        raise InvalidParameter(
            f"vectors have shape {arr.shape}, expected ({n}, {dim})",
            message=f"向量形状 {tuple(arr.shape)} 与期望的 ({n}, {dim}) 不一致",
        )
    if not np.isfinite(arr).all():
        raise InvalidParameter("vectors contain NaN or inf", message="向量包含非法数值")
    return normalize_rows(arr)


def check_batch(
    chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], vectors: np.ndarray | None, dim: int | None
) -> np.ndarray | None:
    """Validate one upsert batch; returns the vectors L2-normalised (None without vectors)."""
    if len(tokens) != len(chunks):
        raise InvalidParameter(
            f"{len(tokens)} token lists for {len(chunks)} chunks",
            message="分词结果数量与文本块数量不一致",
        )
    seen: set[str] = set()
    for c in chunks:
        if not isinstance(c, Chunk) or not isinstance(c.id, str) or not c.id:
            raise InvalidParameter(f"invalid chunk {c!r:.80}", message="文本块缺少有效的 id")
        if c.id in seen:
            raise InvalidParameter(
                f"duplicate chunk id {c.id!r} in one batch", message=f"文本块 id 重复：{c.id}"
            )
        seen.add(c.id)
    if any(isinstance(t, str) for t in tokens):
        raise InvalidParameter("tokens must be lists of strings, not a string", message="分词结果格式错误")
    if vectors is None:
        return None
    return _check_matrix(vectors, len(chunks), dim)


def check_vector_rows(
    ids: Sequence[str], vectors: np.ndarray, dim: int | None
) -> tuple[list[str], np.ndarray]:
    """``(ids, vectors)`` of a vector fill, validated; a repeated id keeps its last vector."""
    if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
        raise InvalidParameter("ids must be a sequence of chunk ids", message="文本块 id 列表格式错误")
    vecs = _check_matrix(vectors, len(ids), dim)
    last = {cid: i for i, cid in enumerate(ids)}
    if len(last) == len(ids):
        return list(ids), vecs
    order = sorted(last.values())
    return [ids[i] for i in order], vecs[order]


def check_text_options(
    features: StoreFeatures, *, k1: float | None, b: float | None, weights: Sequence[float] | None
) -> None:
    """Refuse ``search_text`` keywords a backend does not honour (its :class:`StoreFeatures`).

    Callers read the features first (:mod:`zhiwen.retrieve.hybrid` does), so this only stops a
    caller that did not: silently ignoring a tuned ``k1`` would return a differently ranked list.
    """
    if (k1 is not None or b is not None) and not features.bm25_params:
        raise InvalidParameter(
            "this store does not take BM25 parameters (k1, b)", message="该存储后端不支持设置 BM25 参数"
        )
    if weights is not None and not features.term_weights:
        raise InvalidParameter("this store does not take term weights", message="该存储后端不支持查询词权重")
