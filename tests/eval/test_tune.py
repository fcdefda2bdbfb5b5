"""``zhiwen tune`` and the tuning side of ``zhiwen eval``: halves, held-out scores, tuning.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli.main import app
from zhiwen.eval.beir import in_half, other_half
from zhiwen.eval.tune import read_qrels, read_queries, split_halves, tune_kb
from zhiwen.kb import open_kb
from zhiwen.retrieve.tuning import load_tuning

runner = CliRunner()

WORDS = [
    "宫保鸡丁", "红烧肉", "番茄炒蛋", "麻婆豆腐", "水煮鱼", "回锅肉", "鱼香肉丝", "糖醋排骨",
    "签证", "护照", "契税", "公积金", "个人所得税", "增值税", "不动产登记", "出境入境",
    "高铁", "地铁", "机场", "港口", "医院", "学校", "图书馆", "博物馆",
]  # fmt: skip


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    """24 topics, two passages each (one relevant, one distractor), one query per topic."""
    root = tmp_path / "synthetic"
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, w in enumerate(WORDS):
            f.write(
                json.dumps(
                    {"_id": f"p{i}", "title": w, "text": f"{w}的详细介绍与办理流程。"}, ensure_ascii=False
                )
            )
            f.write("\n")
            f.write(
                json.dumps(
                    {"_id": f"n{i}", "title": "其他", "text": f"与{w}无关的新闻。"}, ensure_ascii=False
                )
            )
            f.write("\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as f:
        for i, w in enumerate(WORDS):
            f.write(json.dumps({"_id": f"q{i}", "text": f"{w}怎么办理"}, ensure_ascii=False) + "\n")
    lines = ["query-id\tcorpus-id\tscore", *(f"q{i}\tp{i}\t1" for i in range(len(WORDS)))]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", "utf-8")
    return root


def test_halves_are_disjoint_and_stable() -> None:
    qids = [f"q{i}" for i in range(100)]
    a = [q for q in qids if in_half(q, "a")]
    b = [q for q in qids if in_half(q, "b")]
    assert set(a).isdisjoint(b) and len(a) + len(b) == 100 and 30 < len(a) < 70
    assert other_half("a") == "b" and all(in_half(q, "all") for q in qids)
    dev, held = split_halves(qids, "b")
    assert dev == b and held == a


def test_too_few_queries_to_split() -> None:
    from zhiwen.errors import IngestError

    with pytest.raises(IngestError) as err:
        split_halves(["q1", "q2"], "a")
    assert "太少" in err.value.message


def test_readers_accept_files_and_directories(labelled: Path, tmp_path: Path) -> None:
    assert read_queries(labelled / "queries.jsonl") == read_queries(labelled)
    assert read_qrels(labelled / "qrels" / "test.tsv") == read_qrels(labelled)
    loose = tmp_path / "my_qrels.tsv"
    loose.write_text("q1 p1 1\nq2\tp2\t2\n", "utf-8")
    assert read_qrels(loose) == {"q1": {"p1": 1}, "q2": {"p2": 2}}


def test_tune_kb_reports_the_held_out_half(labelled: Path, zhiwen_home: Path) -> None:
    kb = open_kb("syn", create=True, embedder="hash")
    kb.index_path(labelled, fmt="beir", progress=False)
    queries, qrels = read_queries(labelled), read_qrels(labelled)
    seen: list[str] = []
    result = tune_kb(
        kb, queries, qrels, dev_half="a", grid={"dense_alpha": (0.3, 0.7), "bm25_k1": (0.9,)}, dataset="syn",
        on_trial=lambda name, value, score, best: seen.append(name),
    )  # fmt: skip
    t = result.tuning
    assert (t.dev_half, t.heldout_half, t.dataset) == ("a", "b", "syn")
    assert t.dev_queries == len([q for q in queries if in_half(q, "a")]) == result.dev_queries
    assert t.heldout_score == pytest.approx(result.heldout_after) and 0 <= result.heldout_after <= 1
    assert t.baseline_heldout_score == pytest.approx(result.heldout_before)
    assert result.dev_after >= result.dev_before
    assert set(seen) == {"dense_alpha", "bm25_k1"} and len(result.trials) >= 4
    assert result.to_dict()["heldout"]["queries"] == result.heldout_queries
    kb.close()


def test_cli_tune_saves_and_eval_uses_it(labelled: Path, zhiwen_home: Path) -> None:
    kb = open_kb("syn", create=True, embedder="hash")
    kb.index_path(labelled, fmt="beir", progress=False)
    kb.close()
    args = [
        "tune",
        "syn",
        "--queries",
        str(labelled / "queries.jsonl"),
        "--qrels",
        str(labelled / "qrels/test.tsv"),
    ]
    res = runner.invoke(app, [*args, "--json", "--rounds", "1"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["saved"] and data["tuning"]["heldout_half"] == "b"
    tuning = load_tuning(Path(data["saved"]).parent)
    assert tuning is not None and tuning.bm25_k1 is not None

    res = runner.invoke(
        app, ["eval", str(labelled), "--kb", "syn", "--mode", "hybrid", "--half", "b", "--json"]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["half"] == "b" and report["n_queries"] == tuning.heldout_queries
    run = report["results"][0]
    assert run["params"]["sources"]["bm25"] == "tuning.json"
    assert run["params"]["bm25"]["k1"] == tuning.bm25_k1
    assert report["tuning"]["heldout_score"] == tuning.heldout_score
    assert run["ndcg@10"] == pytest.approx(tuning.heldout_score, abs=1e-4)  # the same number, from eval

    res = runner.invoke(app, ["eval", str(labelled), "--kb", "syn", "--mode", "hybrid", "--no-tuning"])
    assert res.exit_code == 0, res.output
    assert "调优" not in res.output and "反馈" in res.output  # the parameters column

    res = runner.invoke(app, ["tune", "syn", "--reset"])
    assert res.exit_code == 0 and "已删除" in res.output
    assert load_tuning(Path(data["saved"]).parent) is None


def test_cli_tune_table_and_errors(labelled: Path, zhiwen_home: Path) -> None:
    kb = open_kb("syn", create=True, embedder="hash")
    kb.index_path(labelled, fmt="beir", progress=False)
    kb.close()
    res = runner.invoke(
        app, ["tune", "syn", "-q", str(labelled), "-r", str(labelled), "--dry-run", "--rounds", "1"]
    )
    assert res.exit_code == 0, res.output
    assert "留出半区 ndcg@10" in res.output and "未保存" in res.output
    assert load_tuning(zhiwen_home / "kbs" / "syn") is None
    res = runner.invoke(app, ["tune", "syn"])
    assert res.exit_code == 2 and "--queries" in res.output
    res = runner.invoke(app, ["tune", "syn", "-q", str(labelled), "-r", str(labelled), "--dev-half", "c"])
    assert res.exit_code == 2 and "半区" in res.output
    res = runner.invoke(app, ["tune", "nosuch", "-q", str(labelled), "-r", str(labelled)])
    assert res.exit_code != 0 and "Traceback" not in res.output
    res = runner.invoke(app, ["tune", "--help"])
    assert res.exit_code == 0 and "留出" in res.output
