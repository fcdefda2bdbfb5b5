"""The relevance evidence: features of the best units, the model, and the search verdict."""

from __future__ import annotations

import pytest

from zhiwen.answer.question_types import analyse_question
from zhiwen.answer.relevance import (
    FEATURES,
    RelevanceModel,
    Verdict,
    relevance_features,
    relevance_verdict,
)
from zhiwen.answer.scoring import score_units
from zhiwen.answer.stage import answer_from_parents, candidates_from_parents
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit


def hit(
    cid: str, text: str, title: str = "", score: float = 1.0, section: str = "", dense: float | None = None
) -> SearchHit:
    chunk = Chunk(id=cid, doc_id=cid.split("#")[0], text=text, title=title, metadata={"section": section})
    return SearchHit(chunk, score, vector_score=dense)


def parent(doc_id: str, text: str, score: float = 1.0, dense: float | None = None) -> ParentHit:
    return ParentHit(
        Document(id=doc_id, text=text), score, [hit(f"{doc_id}#0", text, score=score, dense=dense)]
    )


def features(question: str, parents: list[ParentHit]) -> dict[str, float]:
    q = analyse_question(question)
    return relevance_features(q, score_units(q, candidates_from_parents(parents)))


GDP_2021 = "2021年香港本地生产总值（GDP）增长6.4%，扭转了连续两年的收缩。"
GDP_2020 = "2020年香港本地生产总值（GDP）收缩6.1%，为有记录以来最大跌幅。"


def test_every_feature_is_reported_in_0_1() -> None:
    found = features("2021年香港GDP增长了多少？", [parent("a", GDP_2021)])
    assert set(found) == set(FEATURES)
    assert all(0.0 <= v <= 1.0 for v in found.values())


def test_constraints_need_the_questions_year() -> None:
    # same topic, another year: the number of the question (2021) is not there
    assert features("2021年香港GDP增长了多少？", [parent("a", GDP_2021)])["constraints"] == 1.0
    assert features("2021年香港GDP增长了多少？", [parent("b", GDP_2020)])["constraints"] == 0.0


def test_typed_unit_needs_a_span_of_the_expected_type() -> None:
    with_number = features("香港GDP增长了多少？", [parent("a", GDP_2021)])
    without = features(
        "香港GDP增长了多少？", [parent("c", "香港本地生产总值（GDP）的统计口径由统计处公布。")]
    )
    assert with_number["typed_unit"] > 0.5 and without["typed_unit"] == 0.0


def test_sources_agreeing_and_the_score_gap() -> None:
    agreeing = [parent(f"d{i}", GDP_2021, score=1.0) for i in range(5)]
    found = features("2021年香港GDP增长了多少？", agreeing)
    assert found["typed_sources"] == 1.0 and found["score_gap"] == 0.0
    steep = [parent("top", GDP_2021, 1.0), *(parent(f"w{i}", GDP_2020, 0.2) for i in range(4))]
    assert features("2021年香港GDP增长了多少？", steep)["score_gap"] == pytest.approx(0.8)


def test_dense_is_the_best_cosine_retrieval_reported() -> None:
    assert features("香港GDP增长了多少？", [parent("a", GDP_2021, dense=0.83)])["dense"] == pytest.approx(
        0.83
    )
    assert features("香港GDP增长了多少？", [parent("a", GDP_2021)])["dense"] == 0.0  # BM25 only


def test_model_weights_by_name() -> None:
    model = RelevanceModel(intercept=-1.0, weights={"coverage": 2.0})
    assert model.score({"coverage": 0.5, "bigram": 1.0}) == pytest.approx(0.5)
    assert 0.0 < model.score({"coverage": 1e9}) <= 1.0  # no overflow


def test_the_other_years_passage_scores_lower() -> None:
    right = answer_from_parents("2021年香港GDP增长了多少？", [parent("a", GDP_2021)], floor=0.0)
    wrong = answer_from_parents("2021年香港GDP增长了多少？", [parent("b", GDP_2020)], floor=0.0)
    assert right.relevance > wrong.relevance


def test_duplicate_sentences_from_two_sources_lead_once() -> None:
    text = "数据显示，深圳大学2022级本科新生录取7436人，生源质量稳定。"
    ans = answer_from_parents(
        "深圳大学2022年录取了多少名本科生？",
        [parent("a", text), parent("b", text.replace("，", "， "))],
        floor=0.0,
    )
    assert ans.lead.count("7436") == 1


MANUAL = (
    "# 建立知识库\n\n## 导入文档\n\n用 `zhiwen index` 命令把一个目录导入知识库。支持 Markdown 目录和 CSV。\n"
)


def test_verdict_on_relevant_hits() -> None:
    hits = [
        hit(
            "m#0",
            "用 `zhiwen index` 命令把一个目录导入知识库。",
            "建立知识库",
            section="建立知识库 > 导入文档",
        )
    ]
    verdict = relevance_verdict("怎么导入文档？", hits)
    assert verdict == Verdict(True, verdict.score, "relevant") and verdict.score >= 0.1


def test_verdict_on_nonsense() -> None:
    hits = [
        hit(
            "m#0",
            "用 `zhiwen index` 命令把一个目录导入知识库。",
            "建立知识库",
            section="建立知识库 > 导入文档",
        )
    ]
    verdict = relevance_verdict("紫色的大象会在月球上打篮球吗", hits)
    assert not verdict.relevant and verdict.reason == "below_floor" and verdict.score < 0.1
    assert relevance_verdict(
        "紫色的大象会在月球上打篮球吗", hits, floor=0.0
    ).relevant  # the floor is the caller's


def test_verdict_without_hits_or_terms() -> None:
    assert relevance_verdict("怎么导入文档？", []) == Verdict(False, 0.0, "no_hits")
    hits = [hit("m#0", "用 `zhiwen index` 命令把一个目录导入知识库。")]
    assert relevance_verdict("？？", hits) == Verdict(False, 0.0, "no_terms")
    assert relevance_verdict("是什么", hits).reason == "no_terms"


def test_verdict_reads_the_heading_path() -> None:
    # the chunk's words do not name the question's subject; its section does
    body = hit("m#1", "支持 Markdown 目录和 CSV 两种格式。", "手册")
    with_path = hit("m#1", "支持 Markdown 目录和 CSV 两种格式。", "手册", section="手册 > 导入格式")
    question = "导入格式"
    assert (
        relevance_verdict(question, [with_path], floor=0).score
        > relevance_verdict(question, [body], floor=0).score
    )
