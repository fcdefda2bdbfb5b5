"""Multi-KB retrieval (``RetrievalPipeline.search_groups``): KB tags, de-duplication, per-KB counts,
failing KBs reported (never raised), each group reranked with its own query, in parallel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, SearchHit
from zhiwen.errors import StoreUnavailable
from zhiwen.kb import KnowledgeBase, close_all, open_kb
from zhiwen.retrieve.pipeline import GroupResult, QueryGroup, RetrievalPipeline
from zhiwen.retrieve.rerank import Reranker

CORPORA: dict[str, list[tuple[str, str]]] = {
    "visa": [
        ("visa/美国", "美国公民来华需要办理签证，过境免签可停留 240 小时。"),
        ("visa/法国", "法国公民可享受单方面免签政策，停留不超过 30 天。"),
        ("common/说明", "本库收录各国免签与签证政策。"),
    ],
    "crew": [
        ("crew/机组", "国际航班机组人员凭有效证件可临时入境，免办签证。"),
        ("crew/船员", "国际邮轮船员可申请临时入境许可。"),
        ("common/说明", "本库收录机组与船员入境政策。"),  # same doc id as in visa: a different source
    ],
    "law": [
        ("law/出境入境管理法", "外国人入境应当向驻外签证机关申请办理签证，法律另有规定的除外。"),
        ("law/居留", "外国人在中国境内居留，应当持有居留证件。"),
    ],
}


class FakeKB:
    """Enough of a KnowledgeBase for the pipeline: ``name`` and ``search``."""

    def __init__(
        self,
        name: str,
        hits: Sequence[SearchHit] = (),
        *,
        error: Exception | None = None,
        delay_s: float = 0.0,
        gate: threading.Barrier | None = None,
    ) -> None:
        self.name = name
        self.path = None  # not tuned
        self.hits = list(hits)
        self.error = error
        self.delay_s = delay_s
        self.gate = gate  # every search waits there until the other KBs' searches arrive too
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def search(self, query: str, **kwargs: Any) -> list[SearchHit]:
        self.calls.append((query, kwargs))
        if self.gate is not None:
            self.gate.wait()
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.error is not None:
            raise self.error
        return list(self.hits)


class RecordingReranker:
    """Scores the LAST text highest (reverses the order it is given) and records every call."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        n = len(texts)
        return [0.5 + 0.5 * (i + 1) / n for i in range(n)]


def as_kbs(*kbs: Any) -> list[KnowledgeBase]:
    """Fakes (and real KBs) typed as what ``QueryGroup`` holds."""
    return [cast(KnowledgeBase, kb) for kb in kbs]


def hit(chunk_id: str, score: float, text: str = "") -> SearchHit:
    doc_id = chunk_id.split("#")[0]
    return SearchHit(
        chunk=Chunk(id=chunk_id, doc_id=doc_id, text=text or chunk_id, title=doc_id), score=score
    )


def make_settings(home: Path, *, rerank: bool = False) -> Settings:
    return Settings(
        home=home, embedding={"provider": "hash"}, rerank={"enabled": rerank, "score_threshold": 0.0}
    )


@pytest.fixture
def kbs(zhiwen_home: Path) -> Iterator[dict[str, KnowledgeBase]]:
    settings = make_settings(zhiwen_home)
    out = {}
    for name, docs in CORPORA.items():
        kb = open_kb(name, settings=settings, create=True, embedder="hash")
        kb.index_documents([Document(id=i, text=t, title=i) for i, t in docs], progress=False)
        out[name] = kb
    yield out
    close_all()


def run_groups(
    settings: Settings, groups: Sequence[QueryGroup], *, top_k: int = 5, reranker: Reranker | None = None
) -> list[GroupResult]:
    factory = (lambda cfg: reranker) if reranker is not None else (lambda cfg: RecordingReranker())
    pipeline = RetrievalPipeline(lambda: settings, reranker_factory=factory)
    try:
        return pipeline.search_groups(groups, top_k=top_k)
    finally:
        pipeline.close()


def kb_doc_ids(name: str) -> set[str]:
    return {doc_id for doc_id, _ in CORPORA[name]}


def test_hits_are_tagged_with_their_kb_and_counted(kbs: dict[str, KnowledgeBase], zhiwen_home: Path) -> None:
    settings = make_settings(zhiwen_home)
    groups = [
        QueryGroup("specialist", "美国 免签 机组", [kbs["visa"], kbs["crew"]]),
        QueryGroup("general", "外国人入境签证", [kbs["law"]]),
    ]
    specialist, general = run_groups(settings, groups, top_k=4)
    assert (specialist.name, specialist.query) == ("specialist", "美国 免签 机组")
    assert general.name == "general" and specialist.errors == {} == general.errors
    assert 0 < len(specialist.hits) <= 4 and 0 < len(general.hits) <= 4
    for result, names in ((specialist, {"visa", "crew"}), (general, {"law"})):
        assert {h.extra["kb"] for h in result.hits} <= names
        for h in result.hits:
            assert h.chunk.doc_id in kb_doc_ids(h.extra["kb"])
        assert set(result.per_kb_counts) == names
        assert result.params["top_k"] == 4 and result.seconds > 0
    assert {h.extra["kb"] for h in specialist.hits} == {"visa", "crew"}

    pipeline = RetrievalPipeline(lambda: settings)
    _, params = pipeline.plan("美国 免签 机组", 4)
    for name in ("visa", "crew"):
        expected = kbs[name].search("美国 免签 机组", mode=params["mode"], top_k=params["fetch_k"])
        assert specialist.per_kb_counts[name] == len(expected)
    assert specialist.diagnostics["retrieved"] == sum(specialist.per_kb_counts.values())
    # the KB's own hits are not modified by the tagging
    assert all("kb" not in h.extra for h in kbs["visa"].search("美国 免签", top_k=3))


def test_same_document_id_in_two_kbs_stays_two_sources(
    kbs: dict[str, KnowledgeBase], zhiwen_home: Path
) -> None:
    (result,) = run_groups(
        make_settings(zhiwen_home), [QueryGroup("g", "本库收录 政策", [kbs["visa"], kbs["crew"]])], top_k=10
    )
    common = sorted(h.extra["kb"] for h in result.hits if h.chunk.doc_id == "common/说明")
    assert common == ["crew", "visa"]


def test_duplicates_within_a_group_are_merged(kbs: dict[str, KnowledgeBase], zhiwen_home: Path) -> None:
    (result,) = run_groups(
        make_settings(zhiwen_home), [QueryGroup("g", "签证", [kbs["law"], kbs["law"], kbs["visa"]])], top_k=10
    )
    keys = [(h.extra["kb"], h.chunk.id) for h in result.hits]
    assert len(keys) == len(set(keys)) and {k for k, _ in keys} <= {"law", "visa"}


def test_a_duplicate_keeps_its_best_score_and_order_is_by_score(zhiwen_home: Path) -> None:
    kb = FakeKB("fake", [hit("a#0", 0.3), hit("b#0", 0.6), hit("a#0", 0.9), hit("c#0", 0.1)])
    (result,) = run_groups(make_settings(zhiwen_home), [QueryGroup("g", "问题", as_kbs(kb))], top_k=5)
    assert [(h.chunk.id, h.score) for h in result.hits] == [("a#0", 0.9), ("b#0", 0.6), ("c#0", 0.1)]
    assert result.per_kb_counts == {"fake": 4}
    assert all(h.extra == {"kb": "fake"} for h in result.hits)


def test_a_failing_kb_is_reported_and_the_group_still_answers(
    kbs: dict[str, KnowledgeBase], zhiwen_home: Path
) -> None:
    down = FakeKB("down", error=StoreUnavailable("connection refused"))
    buggy = FakeKB("buggy", error=RuntimeError("boom"))
    groups = [
        QueryGroup("mixed", "签证", as_kbs(down, kbs["visa"], buggy)),
        QueryGroup("all_down", "签证", as_kbs(down)),
        QueryGroup("fine", "居留证件", [kbs["law"]]),
    ]
    mixed, all_down, fine = run_groups(make_settings(zhiwen_home), groups)
    assert mixed.errors == {"down": "数据查询失败，请稍后重试", "buggy": "RuntimeError: boom"}
    assert mixed.hits and {h.extra["kb"] for h in mixed.hits} == {"visa"}
    assert set(mixed.per_kb_counts) == {"visa"}
    assert all_down.hits == [] and all_down.per_kb_counts == {} and set(all_down.errors) == {"down"}
    assert fine.errors == {} and fine.hits


def test_each_group_is_reranked_with_its_own_query(kbs: dict[str, KnowledgeBase], zhiwen_home: Path) -> None:
    reranker = RecordingReranker()
    groups = [
        QueryGroup("specialist", "美国 United States 免签", [kbs["visa"], kbs["crew"]]),
        QueryGroup("general", "美国人来中国要签证吗", [kbs["law"]]),
    ]
    results = run_groups(make_settings(zhiwen_home, rerank=True), groups, top_k=3, reranker=reranker)
    assert [q for q, _ in reranker.calls] == [g.query for g in groups]
    for (_, texts), group, result in zip(reranker.calls, groups, results, strict=True):
        group_texts = {t for kb in group.kbs for _, t in CORPORA[kb.name]}
        assert set(texts) <= group_texts
        assert result.diagnostics["rerank"] == "reranked"
        assert all(h.rerank_score is not None for h in result.hits)
        scores = [float(h.rerank_score or 0.0) for h in result.hits]
        assert scores == sorted(scores, reverse=True) and len(result.hits) <= 3
        assert result.params["rerank"]["enabled"] is True


def test_rerank_setting_is_read_at_each_call(kbs: dict[str, KnowledgeBase], zhiwen_home: Path) -> None:
    reranker = RecordingReranker()
    current = {"settings": make_settings(zhiwen_home)}
    pipeline = RetrievalPipeline(lambda: current["settings"], reranker_factory=lambda cfg: reranker)
    groups = [QueryGroup("g", "免签", [kbs["visa"]])]
    try:
        (off,) = pipeline.search_groups(groups, top_k=3)
        assert reranker.calls == [] and off.diagnostics["rerank"] == "fused_order"
        current["settings"] = make_settings(zhiwen_home, rerank=True)
        (on,) = pipeline.search_groups(groups, top_k=3)
        assert [q for q, _ in reranker.calls] == ["免签"] and on.diagnostics["rerank"] == "reranked"
    finally:
        pipeline.close()


def test_filters_and_effective_params_reach_each_kb(zhiwen_home: Path) -> None:
    a, b = FakeKB("a", [hit("x#0", 0.5)]), FakeKB("b", [hit("y#0", 0.4)])
    settings = make_settings(zhiwen_home)
    (result,) = run_groups(
        settings, [QueryGroup("g", "上海 政策", as_kbs(a, b), filters={"city": "上海"})], top_k=2
    )
    for kb in (a, b):
        ((query, kwargs),) = kb.calls
        assert query == "上海 政策" and kwargs["filters"] == {"city": "上海"}
        assert kwargs["top_k"] == result.params["fetch_k"] and kwargs["mode"] == result.params["mode"]


def test_searches_run_in_parallel(zhiwen_home: Path) -> None:
    # the four searches pass the gate only together: run one after another, they would break it
    gate = threading.Barrier(4, timeout=10)
    kbs = [FakeKB(f"kb{i}", [hit(f"d{i}#0", 0.5)], gate=gate) for i in range(4)]
    groups = [QueryGroup("g1", "问题一", as_kbs(*kbs[:2])), QueryGroup("g2", "问题二", as_kbs(*kbs[2:]))]
    g1, g2 = run_groups(make_settings(zhiwen_home), groups)
    assert not g1.errors and not g2.errors and not gate.broken
    assert {h.extra["kb"] for h in g1.hits} == {"kb0", "kb1"}
    assert {h.extra["kb"] for h in g2.hits} == {"kb2", "kb3"}


def test_no_groups_no_results(zhiwen_home: Path) -> None:
    assert run_groups(make_settings(zhiwen_home), []) == []
