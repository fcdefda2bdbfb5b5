"""``zhiwen eval-answers``: offline answers scored against gold answers, with negative rejection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli.main import app
from zhiwen.config import Settings
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.eval.answers import (
    Outcome,
    evaluate_answers,
    gold_in,
    in_half,
    load_gold,
    summarise,
    without_positives_kb,
)
from zhiwen.eval.beir import BeirDataset

runner = CliRunner()
GOLD = [
    {
        "query_id": "q1",
        "question": "宫保鸡丁用什么主料",
        "answers": ["鸡丁、花生米和干辣椒"],
        "gold_doc_id": "p1",
    },
    {
        "query_id": "q2",
        "question": "外国人入境要办签证吗",
        "answers": ["申请办理签证"],
        "gold_doc_ids": ["p4", "p5"],
    },
    {"query_id": "q3", "question": "契税税率是多少", "answers": ["百分之三至百分之五"], "gold_doc_id": "p6"},
    {
        "query_id": "q4",
        "question": "住房公积金什么时候可以提取",
        "answers": ["大修自住住房时"],
        "gold_doc_id": "p7",
    },
]


@pytest.fixture
def gold_beir(tiny_beir: Path) -> Path:
    lines = [json.dumps(row, ensure_ascii=False) for row in GOLD]
    (tiny_beir / "answers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tiny_beir


def settings(home: Path) -> Settings:
    return Settings(home=home, embedding={"provider": "hash"})


def test_offline_answers_are_scored(gold_beir: Path, tmp_path: Path) -> None:
    report = evaluate_answers(gold_beir, embedder="hash", mode="bm25", settings=settings(tmp_path))
    m = report.metrics
    assert report.n_queries == 4 and report.kb == "eval-tiny_beir-hash"
    assert m["gold_first_200"] == 1.0 and m["gold_anywhere"] == 1.0
    assert 0 < m["length_p50"] <= 300
    assert 0.0 <= m["negatives_rejected"] <= 1.0 and 0.0 <= m["answerable_precision"] <= 1.0
    assert m["answer_ms_p50"] >= 0 and m["retrieval_ms_p50"] >= 0
    first = report.results[0]
    assert first.negative_answerable is not None and first.answer.endswith("以上内容直接摘自知识库）")
    data = report.to_dict()
    assert data["dataset"] == "tiny_beir" and "gold_first_200" in data and "results" not in data


def test_a_custom_answerer_and_no_negatives(gold_beir: Path, tmp_path: Path) -> None:
    seen: list[int] = []

    def pasted(question: str, parents: object, kb: object) -> Outcome:
        seen.append(len(parents))  # type: ignore[arg-type]
        return Outcome("无关的文字" * 50, True, 1.0)

    report = evaluate_answers(
        gold_beir, embedder="hash", mode="bm25", settings=settings(tmp_path), answerer=pasted, negatives=False
    )
    assert report.metrics["gold_anywhere"] == 0.0 and "negatives_rejected" not in report.metrics
    assert len(seen) == 4 and all(n >= 1 for n in seen)


def test_halves_split_the_questions(gold_beir: Path, tmp_path: Path) -> None:
    a = evaluate_answers(gold_beir, half="a", embedder="hash", mode="bm25", settings=settings(tmp_path))
    b = evaluate_answers(gold_beir, half="b", embedder="hash", mode="bm25", settings=settings(tmp_path))
    assert a.n_queries + b.n_queries == 4
    assert all(in_half(r.qid, "a") for r in a.results) and not any(in_half(r.qid, "a") for r in b.results)
    with pytest.raises(InvalidParameter):
        evaluate_answers(gold_beir, half="c", embedder="hash", settings=settings(tmp_path))


def test_missing_answers_file(tiny_beir: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError):
        evaluate_answers(tiny_beir, embedder="hash", settings=settings(tmp_path))


def test_gold_matching_ignores_whitespace_and_case() -> None:
    assert gold_in("答案是 Ω-Force 和光荣", ["ω-force和光荣"])
    assert not gold_in("", ["x"]) and summarise([]) == {}


def test_cli_eval_answers(gold_beir: Path, zhiwen_home: Path) -> None:
    res = runner.invoke(
        app, ["eval-answers", str(gold_beir), "--embedder", "hash", "--mode", "bm25", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["n_queries"] == 4 and data["gold_first_200"] == 1.0 and "negatives_rejected" in data
    res = runner.invoke(app, ["eval-answers", str(gold_beir), "--embedder", "hash", "--no-negatives"])
    assert res.exit_code == 0, res.output
    assert "前 200 字" in res.output and "拒答率" not in res.output
    res = runner.invoke(app, ["eval-answers", str(gold_beir), "--mode", "fuzzy"])
    assert res.exit_code == 2 and "fuzzy" in res.output


def test_nested_gold_answers_are_alternatives(gold_beir: Path) -> None:
    # RGB nests alternatives: [["463亿", "462.7亿"]]
    rows = [json.loads(x) for x in (gold_beir / "answers.jsonl").read_text("utf-8").splitlines()]
    rows[0]["answers"] = [["鸡丁", "花生米"], "干辣椒"]
    (gold_beir / "answers.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8"
    )
    gold = load_gold(gold_beir, BeirDataset.load(gold_beir))
    assert gold["q1"].answers == ("鸡丁", "花生米", "干辣椒")


def test_negatives_come_from_a_kb_without_the_positives(gold_beir: Path, tmp_path: Path) -> None:
    s = settings(tmp_path)
    report = evaluate_answers(gold_beir, embedder="hash", mode="bm25", settings=s)
    gold = load_gold(gold_beir, BeirDataset.load(gold_beir))
    kb = without_positives_kb(gold_beir, list(gold.values()), settings=s, embedder="hash")
    try:
        ids = {d.id for d in kb.get_parents([f"p{i}" for i in range(1, 10)])}
        assert ids and not ids & {"p1", "p4", "p5", "p6", "p7"}  # every positive is gone, the rest stays
    finally:
        kb.close()
    assert len(list((tmp_path / "eval").iterdir())) == 1  # built once, reused by the second call
    m = report.metrics
    assert (
        0.0 <= m["negatives_rejected_clean"] <= 1.0 and m["answerable_kept_retrieved"] >= m["answerable_kept"]
    )
    # the gold is in no passage of the KB without positives: every negative is a clean one
    assert all(r.negative_gold_retrieved is False for r in report.results)
    hits = evaluate_answers(gold_beir, embedder="hash", mode="bm25", settings=s, negatives_from="hits")
    assert "negatives_rejected" in hits.metrics
    with pytest.raises(InvalidParameter):
        evaluate_answers(gold_beir, embedder="hash", settings=s, negatives_from="nope")
