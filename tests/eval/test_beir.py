"""The BEIR harness end to end on a tiny dataset with the hash embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.eval.beir import BeirDataset, RunSpec, default_kb_name, evaluate, resolve_specs
from zhiwen.eval.report import markdown_table, rich_table
from zhiwen.kb import open_kb


def test_dataset_sampling(tiny_beir: Path) -> None:
    ds = BeirDataset.load(tiny_beir)
    # q5 has no qrels: never sampled
    assert ds.judged_query_ids() == ["q1", "q2", "q3", "q4"]
    assert ds.sample(None) == ["q1", "q2", "q3", "q4"]
    assert ds.sample(10) == ["q1", "q2", "q3", "q4"]
    two = ds.sample(2, seed=0)
    assert len(two) == 2 and two == ds.sample(2, seed=0)  # fixed seed → same sample
    assert set(two) <= {"q1", "q2", "q3", "q4"}
    with pytest.raises(InvalidParameter):
        ds.sample(0)


def test_resolve_specs() -> None:
    assert [s.mode for s in resolve_specs("all")] == ["bm25", "dense", "hybrid"]
    assert resolve_specs("hybrid", "rrf")[0].fusion == "rrf"
    assert resolve_specs("bm25", "rrf")[0].fusion is None
    custom = RunSpec("α=0.7", "hybrid", fusion="weighted", weights=(0.3, 0.7))
    assert resolve_specs([custom, "bm25"]) == [custom, RunSpec("bm25", "bm25")]
    with pytest.raises(InvalidParameter):
        resolve_specs("fuzzy")


def test_evaluate_builds_and_scores(tiny_beir: Path, zhiwen_home: Path) -> None:
    report = evaluate(None, tiny_beir, "all", embedder="hash")
    assert report.kb == default_kb_name(tiny_beir, "hash") == "eval-tiny_beir-hash"
    assert report.n_queries == 4 and report.n_queries_available == 4
    assert report.build is not None and not report.build.reused
    assert report.build.documents == 8 and report.build.chunks == 8
    assert report.query_embedding is not None
    assert [r.label for r in report.results] == ["bm25", "dense", "hybrid"]
    for r in report.results:
        assert set(r.metrics) == {"ndcg@10", "recall@10", "mrr@10"}
        assert all(0.0 <= v <= 1.0 for v in r.metrics.values())
        assert r.latency.p50_ms >= r.search_latency.p50_ms * 0.5
        assert r.latency.p95_ms >= r.latency.p50_ms
        assert set(r.rankings) == {"q1", "q2", "q3", "q4"}
    bm25 = report.result("bm25")
    # lexical queries over 8 passages: BM25 finds every relevant passage in the top 10
    assert bm25.metrics["recall@10"] == 1.0
    assert bm25.metrics["mrr@10"] > 0.7
    assert bm25.search_latency.p50_ms == bm25.latency.p50_ms  # no embedding in bm25

    d = report.to_dict()
    json.dumps(d, ensure_ascii=False)
    assert d["results"][0]["label"] == "bm25" and "rankings" not in d["results"][0]
    assert "nDCG@10" in markdown_table(report)
    assert rich_table(report).row_count == 3

    again = evaluate(None, tiny_beir, "bm25", embedder="hash")
    assert again.build is not None and again.build.reused  # unchanged corpus: index reused
    assert again.result("bm25").metrics == bm25.metrics
    rebuilt = evaluate(None, tiny_beir, "bm25", embedder="hash", rebuild=True)
    assert rebuilt.build is not None and not rebuilt.build.reused
    assert rebuilt.build.embedded == 0  # every vector came from the embedding cache


def test_evaluate_sample_and_k(tiny_beir: Path, zhiwen_home: Path) -> None:
    report = evaluate("my-eval", tiny_beir, "bm25", n_queries=2, seed=3, k=1, embedder="hash")
    assert report.kb == "my-eval" and report.n_queries == 2 and report.k == 1
    assert set(report.results[0].metrics) == {"ndcg@1", "recall@1", "mrr@1"}


def test_evaluate_open_kb_is_not_reindexed(tiny_beir: Path, zhiwen_home: Path) -> None:
    kb = open_kb("pre-built", create=True, embedder="hash")
    kb.index_path(tiny_beir, fmt="beir", progress=False)
    revision = kb.revision
    report = evaluate(kb, tiny_beir, "hybrid", fusion="rrf")
    assert report.build is None and kb.revision == revision
    assert report.results[0].label == "hybrid (rrf)" and report.results[0].fusion == "rrf"
    assert not kb.closed  # the caller's KB stays open


def test_split_passages_map_to_doc_ids(tiny_beir: Path, zhiwen_home: Path) -> None:
    """Several chunks of one passage count once, under the passage id."""
    kb = open_kb("split", create=True, embedder="hash")
    docs = [Document(id="p1", text="宫保鸡丁 鸡丁 花生米"), Document(id="p6", text="契税税率 百分之三")]
    chunks = [
        Chunk(id="p1#0", doc_id="p1", text="宫保鸡丁是一道川菜", parent_id="p1"),
        Chunk(id="p1#1", doc_id="p1", text="宫保鸡丁的主料是鸡丁和花生米", parent_id="p1"),
        Chunk(id="p6#0", doc_id="p6", text="契税税率为百分之三至百分之五", parent_id="p6"),
    ]
    kb.index_documents(docs, chunks=chunks, progress=False)
    report = evaluate(kb, tiny_beir, "bm25", k=10)
    run = report.results[0].rankings
    assert run["q1"][0] == "p1" and run["q1"].count("p1") == 1
    assert report.results[0].metrics["recall@10"] == pytest.approx((1 + 0 + 1 + 0) / 4)


def test_bad_dataset_dir(tmp_path: Path, zhiwen_home: Path) -> None:
    with pytest.raises(IngestError):
        evaluate(None, tmp_path / "missing", "bm25", embedder="hash")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError):
        evaluate(None, tmp_path / "empty", "bm25", embedder="hash")


@pytest.mark.shared_data
def test_cmrc_bm25_recall(shared_data: Path, zhiwen_home: Path) -> None:
    """BM25 alone on 50 CMRC2018 queries (no embedding): the lexically easy set is near-saturated."""
    report = evaluate(None, shared_data / "cmrc2018_retrieval", "bm25", n_queries=50, embedder="hash")
    assert report.n_queries == 50
    assert report.result("bm25").metrics["recall@10"] >= 0.95
