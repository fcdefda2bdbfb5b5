"""Dual-question retrieval with independent rerank, and the single-question fallback.

``dual``: the rewritten question searches the specialist KBs (merged, de-duplicated), the
original question searches the general KB; both groups run in parallel through
``pipeline.search_groups`` and each is reranked with its own question (the configured reranker,
else the fused order). :func:`select_halves` keeps ``ceil(top_n / 2)`` specialist hits and
``top_n // 2`` general hits — 10 + 10 by default — and backfills from the other group when
one has fewer. An article that both groups found (the airline KB's articles are also in the
general KB) is kept once, in the specialist half.

``single``: the original question over the given KBs as one group, ``top_n`` hits.

Example::

    >>> out = dual_retrieve(ctx.pipeline, [visa_kb, airline_kb], general_kb,
    ...                     rewritten="…（国家：塞尔维亚 Serbia；关键词：机组人员 crew…）",
    ...                     original="关于塞尔维亚的机组人员入出境…", top_n=20, intent="airline_visa_free")
    >>> out.strategy, len(out.specialist), len(out.general)
    ('dual', 10, 10)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from zhiwen.documents import SearchHit, content_hash
from zhiwen.retrieve.pipeline import GroupResult, QueryGroup

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.retrieve.pipeline import RetrievalPipeline

log = logging.getLogger("zhiwen.apps.policy")

SPECIALIST = "specialist"
GENERAL = "general"
SINGLE = "single"


@dataclass(slots=True)
class RetrievalOutcome:
    strategy: Literal["dual", "single"]
    hits: list[SearchHit]  # the final list (specialist half first, then general)
    specialist: list[SearchHit] = field(default_factory=list)  # its share of ``hits``
    general: list[SearchHit] = field(default_factory=list)
    per_kb_counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # KB → why it failed
    merged_counts: dict[str, int] = field(default_factory=dict)  # group → after merge/dedupe
    reranked_counts: dict[str, int] = field(default_factory=dict)  # group → after rerank
    top_scores: dict[str, list[float]] = field(default_factory=dict)  # group → top-5 scores
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def hit_group(hit: SearchHit) -> str:
    return str(hit.extra.get("group", ""))


def _key(hit: SearchHit) -> str:
    return content_hash(hit.chunk.text)


def select_halves(
    specialist: Sequence[SearchHit], general: Sequence[SearchHit], top_n: int
) -> list[SearchHit]:
    """``ceil(top_n/2)`` specialist + ``top_n//2`` general hits, backfilled, text-level de-duplicated."""
    seen: set[str] = set()
    spec: list[SearchHit] = []
    for h in specialist:
        if _key(h) not in seen:
            seen.add(_key(h))
            spec.append(h)
    gen: list[SearchHit] = []
    for h in general:
        if _key(h) not in seen:
            seen.add(_key(h))
            gen.append(h)
    want_spec, want_gen = top_n - top_n // 2, top_n // 2
    take_spec = min(len(spec), want_spec + max(0, want_gen - len(gen)))
    take_gen = min(len(gen), top_n - take_spec)
    return spec[:take_spec] + gen[:take_gen]


def _tag(hits: Sequence[SearchHit], group: str) -> list[SearchHit]:
    for h in hits:
        h.extra["group"] = group
    return list(hits)


def _top5(hits: Sequence[SearchHit]) -> list[float]:
    return [round(float(h.rerank_score if h.rerank_score is not None else h.score), 4) for h in hits[:5]]


def dual_retrieve(
    pipeline: RetrievalPipeline,
    specialist_kbs: Sequence[KnowledgeBase],
    general_kb: KnowledgeBase,
    *,
    rewritten: str,
    original: str,
    top_n: int,
    intent: str = "",
) -> RetrievalOutcome:
    """Both groups in parallel, reranked independently, then ``select_halves`` (see module doc)."""
    groups = [
        QueryGroup(SPECIALIST, rewritten, list(specialist_kbs)),
        QueryGroup(GENERAL, original, [general_kb]),
    ]
    spec, gen = pipeline.search_groups(groups, top_k=top_n)
    outcome = _outcome("dual", [spec, gen])
    spec_hits = _tag(spec.hits, SPECIALIST)
    gen_hits = _tag(gen.hits, GENERAL)
    outcome.hits = select_halves(spec_hits, gen_hits, top_n)
    outcome.specialist = [h for h in outcome.hits if hit_group(h) == SPECIALIST]
    outcome.general = [h for h in outcome.hits if hit_group(h) == GENERAL]
    _log_dual(intent, original, rewritten, spec, gen, outcome, specialist_kbs, general_kb)
    return outcome


def single_retrieve(
    pipeline: RetrievalPipeline, kbs: Sequence[KnowledgeBase], *, question: str, top_n: int
) -> RetrievalOutcome:
    """The original question over ``kbs`` as one group (the fallback and the ``other`` route)."""
    if not kbs:
        return RetrievalOutcome("single", [])
    (group,) = pipeline.search_groups([QueryGroup(SINGLE, question, list(kbs))], top_k=top_n)
    outcome = _outcome("single", [group])
    outcome.hits = _tag(group.hits[:top_n], SINGLE)
    log.info(
        "[单问题检索] 问题: %s | 知识库: %s | 返回: %s | Top5得分: %s",
        question,
        ", ".join(kb.name for kb in kbs),
        group.per_kb_counts,
        [f"{s:.4f}" for s in outcome.top_scores.get(SINGLE, [])],
    )
    return outcome


def _outcome(strategy: Literal["dual", "single"], groups: Sequence[GroupResult]) -> RetrievalOutcome:
    out = RetrievalOutcome(strategy, [])
    for g in groups:
        out.per_kb_counts.update(g.per_kb_counts)
        out.errors.update(g.errors)
        out.merged_counts[g.name] = int(g.diagnostics.get("retrieved", len(g.hits)))
        out.reranked_counts[g.name] = len(g.hits)
        out.top_scores[g.name] = _top5(g.hits)
        out.params[g.name] = g.params
        out.seconds = max(out.seconds, g.seconds)
    first = groups[0].diagnostics if groups else {}
    out.params["rerank"] = first.get("rerank", "fused_order")
    return out


def _log_dual(
    intent: str,
    original: str,
    rewritten: str,
    spec: GroupResult,
    gen: GroupResult,
    out: RetrievalOutcome,
    specialist_kbs: Sequence[KnowledgeBase],
    general_kb: KnowledgeBase,
) -> None:
    log.info("[双问题检索] 策略: %s", intent)
    log.info("[双问题检索] 原问题: %s", original)
    log.info("[双问题检索] 改写问题: %s", rewritten)
    log.info(
        "[双问题检索] 通用库（原问题）%s 返回 %d 条",
        general_kb.name,
        gen.per_kb_counts.get(general_kb.name, 0),
    )
    for kb in specialist_kbs:
        log.info("[双问题检索] 专业库（改写问题）%s 返回 %d 条", kb.name, spec.per_kb_counts.get(kb.name, 0))
    parts = " + ".join(f"{k}{v}条" for k, v in spec.per_kb_counts.items())
    log.info("[双问题检索] 专业库合并: %s = 去重后%d条", parts or "0条", out.merged_counts[SPECIALIST])
    log.info(
        "[独立重排序] 检索完成 | 专业库: %d条 | 通用库: %d条",
        out.merged_counts[SPECIALIST],
        out.merged_counts[GENERAL],
    )
    for name, label in ((SPECIALIST, "专业库"), (GENERAL, "通用库")):
        log.info("[独立重排序] %s重排序完成 | 保留 %d 条", label, out.reranked_counts[name])
        log.info("[独立重排序] %sTop5得分: %s", label, [f"{s:.4f}" for s in out.top_scores[name]])
    log.info(
        "[独立重排序] 最终合并 | 专业库: %d条 + 通用库: %d条 = 总计: %d条",
        len(out.specialist),
        len(out.general),
        len(out.hits),
    )
