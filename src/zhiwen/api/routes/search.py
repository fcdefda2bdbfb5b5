"""``POST /knowledge-base/search``: adaptive search of one KB (rerank, thresholds, MMR).

Request ``{kb, query, top_k?, filters?, mode?}``; response data::

    {"results": [{"chunk_id", "doc_id", "parent_id", "title", "text", "metadata", "score",
                  "vector_score", "bm25_score", "fused_score", "rerank_score", "bm25_rank",
                  "vector_rank"}],
     "intent": "focused", "message": null | "No chunks met rerank threshold（…）",
     "relevance": {"relevant": true, "score": 0.93, "floor": 0.1, "reason": "relevant"},
     "params": {"mmr_lambda", "thresholds": {"similarity", "rerank"}, "rrf_k", "fusion", …},
     "diagnostics": {"retrieved", "passed_similarity", "reranked", "passed_rerank", "fallback", …},
     "warnings": [...]}

The whole pipeline (search, rerank, MMR) is synchronous and runs in the thread pool.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, StrictInt, field_validator
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from zhiwen.answer.relevance import relevance_verdict
from zhiwen.documents import SearchHit
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import KBRegistry, get_access, get_kb_registry, get_pipeline
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import KBName, Question, current_settings
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.store.filters import parse_filters

router = APIRouter(tags=["search"])
NOT_RELEVANT_MESSAGE = "知识库中没有与查询明显相关的内容，以下为最接近的结果，仅供参考"


class SearchRequest(BaseModel):
    kb: KBName = Field(description="知识库名称")
    query: Question = Field(description="查询内容")
    top_k: Annotated[StrictInt, Field(ge=1)] | None = Field(
        None, description="返回条数上限（默认 retrieval.top_k，最大 retrieval.max_top_k）"
    )
    filters: dict[str, Any] | None = Field(
        None, description='元数据过滤，如 {"category": "soup", "difficulty": {"lte": 2}}'
    )
    mode: Literal["bm25", "dense", "hybrid"] | None = Field(None, description="检索模式")

    model_config = {
        "json_schema_extra": {"examples": [{"kb": "demo", "query": "如何创建知识库", "top_k": 5}]}
    }

    @field_validator("top_k")
    @classmethod
    def _cap_top_k(cls, value: int | None) -> int | None:
        limit = current_settings().retrieval.max_top_k
        if value is not None and value > limit:
            raise PydanticCustomError("zhiwen_range", "top_k 不能超过 {limit}", {"limit": limit})
        return value


class SearchResult(BaseModel):
    chunk_id: str
    doc_id: str
    parent_id: str | None = None
    title: str = ""
    text: str
    metadata: dict[str, Any] = {}
    score: float
    vector_score: float | None = None
    bm25_score: float | None = None
    fused_score: float | None = None
    rerank_score: float | None = None
    bm25_rank: int | None = None
    vector_rank: int | None = None


class Relevance(BaseModel):
    """Whether the hits speak about the query at all (the hits themselves are never changed)."""

    relevant: bool = Field(description="false：知识库中没有与查询相关的内容，结果仅供参考")
    score: float = Field(description="0..1，最相关结果的相关度")
    floor: float = Field(description="判定阈值（answer.search_relevance_floor）")
    reason: Literal["relevant", "below_floor", "no_hits", "no_terms"]


class SearchData(BaseModel):
    kb: str
    query: str
    results: list[SearchResult]
    intent: str
    message: str | None = None
    relevance: Relevance | None = None
    params: dict[str, Any]
    diagnostics: dict[str, Any]
    warnings: list[str] = []


def _num(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def hit_to_result(hit: SearchHit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "chunk_id": c.id,
        "doc_id": c.doc_id,
        "parent_id": c.parent_id,
        "title": c.title,
        "text": c.text,
        "metadata": dict(c.metadata),
        "score": _num(hit.score),
        "vector_score": _num(hit.vector_score),
        "bm25_score": _num(hit.bm25_score),
        "fused_score": _num(hit.fused_score),
        "rerank_score": _num(hit.rerank_score),
        "bm25_rank": hit.bm25_rank,
        "vector_rank": hit.vector_rank,
    }


@router.post(
    "/knowledge-base/search", summary="知识库检索（重排 + 自适应）", response_model=Envelope[SearchData]
)
async def search(
    body: SearchRequest,
    kbs: KBRegistry = Depends(get_kb_registry),
    pipeline: RetrievalPipeline = Depends(get_pipeline),
    access: Access = Depends(get_access),
) -> dict[str, Any]:
    access.require_kb(body.kb)  # 403 for a KB the key may not read, before anything is opened
    filters = parse_filters(body.filters) if body.filters else None  # bad filter → 3003 before opening
    kb = await kbs.aget(body.kb)
    result = await run_in_threadpool(
        pipeline.search, kb, body.query, top_k=body.top_k, filters=filters, mode=body.mode
    )
    floor = current_settings().answer.search_relevance_floor
    verdict = await run_in_threadpool(relevance_verdict, body.query, result.hits, floor=floor)
    message = result.message
    if not verdict.relevant and result.hits:
        message = message or NOT_RELEVANT_MESSAGE
    data = {
        "kb": body.kb,
        "query": body.query,
        "results": [hit_to_result(h) for h in result.hits],
        "intent": result.intent.value,
        "message": message,
        "relevance": {
            "relevant": verdict.relevant,
            "score": round(verdict.score, 4),
            "floor": floor,
            "reason": verdict.reason,
        },
        "params": result.params,
        "diagnostics": result.diagnostics,
        "warnings": result.warnings,
    }
    return ok(data, message=message or "success")
