"""Tidy extractive answers: one statement per source, [n] is source n, sources by score, no stray passages."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.answer.compose import RELATED_HEADING
from zhiwen.answer.qa import by_score
from zhiwen.answer.stage import answer_from_parents
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit

SAMPLE_KB = Path(__file__).resolve().parents[2] / "src" / "zhiwen" / "sample_kb"
_CITE = re.compile(r"\[(\d+)\]")


def parent(doc_id: str, text: str, title: str, score: float, passage: str | None = None) -> ParentHit:
    chunk = Chunk(id=f"{doc_id}#0", doc_id=doc_id, text=passage or text, parent_id=doc_id)
    return ParentHit(Document(id=doc_id, text=text, title=title), score, [SearchHit(chunk, score)])


def manual(stem: str, section: str, score: float) -> ParentHit:
    text = (SAMPLE_KB / f"{stem}.md").read_text("utf-8")
    start = text.index(section)
    return parent(stem, text, text.splitlines()[0].lstrip("# "), score, text[start : start + 400])


def lead_of(text: str) -> str:
    return text.split(RELATED_HEADING)[0].strip()


def test_a_faq_of_another_topic_is_not_glued_to_the_lead() -> None:
    """「没有大模型能用吗？」: the GPU FAQ's 「可以。默认模型是…小模型」 speaks of the embedding model."""
    parents = [
        manual("06_配置大模型", "## 错误提示", 0.98),
        manual("07_离线模式与抽取式回答", "## 什么时候使用抽取式回答", 0.94),
        manual("10_常见问题", "## 运行相关", 0.69),
    ]
    ans = answer_from_parents("没有大模型能用吗？", parents, floor=0.0)
    assert "4 比特量化" not in ans.lead
    for line in ans.lead.splitlines():  # whatever joins the lead ends its line with its own source
        assert _CITE.search(line.rstrip()[-4:]), line


def test_news_sources_that_agree_each_keep_their_citation_on_their_own_line() -> None:
    parents = [
        parent("a", "据报道，该市地铁17号线于2021年12月30日开通运营。线路全长35公里。", "地铁新闻", 1.0),
        parent("b", "消息称，地铁17号线在2021年12月30日正式开通运营，设站15座。", "地铁快讯", 0.95),
    ]
    ans = answer_from_parents("地铁17号线什么时候开通运营？", parents, floor=0.0)
    lines = ans.lead.splitlines()
    assert lines[0].endswith("[1]")
    if len(lines) > 1:  # the second source's sentence stands on its own, cited where it stands
        assert lines[1].endswith("[2]") and "[1]" not in lines[1]


def test_a_passage_that_does_not_speak_of_the_question_is_not_listed() -> None:
    """An irrelevant 婚假 passage under a 住宿 question — even as retrieval's first choice."""
    parents = [
        parent("leave", "员工结婚可享受婚假三天，晚婚另加七天。婚假须提前一周申请。", "婚假规定", 1.0),
        parent("dorm", "公司为外地员工提供集体宿舍，住宿费每月两百元，从工资中扣除。", "员工住宿", 0.9),
    ]
    ans = answer_from_parents("员工住宿费怎么收？", parents, floor=0.0)
    assert "住宿费每月两百元" in ans.lead and ans.cited == [2]
    assert "婚假" not in ans.text


@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=8))
def test_sources_are_listed_by_score(scores: list[float]) -> None:
    parents = [parent(f"d{i}", "正文。", f"文档{i}", s) for i, s in enumerate(scores)]
    ordered = by_score(parents)
    assert [p.score for p in ordered] == sorted(scores, reverse=True)
    for a, b in itertools.pairwise(ordered):  # ties keep retrieval's order
        if a.score == b.score:
            assert int(a.document.id[1:]) < int(b.document.id[1:])


SENTENCES = [
    "知识库由文档、切块和索引组成。",
    "导入文档使用 zhiwen index 命令。",
    "混合检索融合关键词和向量两路结果。",
    "重排序默认关闭，阈值为0.5。",
    "没有配置大模型时使用抽取式回答。",
    "连接池最少保持2个连接。",
    "员工结婚可享受婚假三天。",
    "住宿费每月两百元。",
]

QUESTIONS = ["怎么导入文档？", "阈值是多少？", "没有大模型怎么办？", "住宿费多少？", "知识库由什么组成？"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4),
            st.floats(min_value=0.01, max_value=1.0, allow_nan=False),
        ),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from(QUESTIONS),
)
def test_every_citation_is_the_source_of_that_number(docs: list[tuple[list[str], float]], q: str) -> None:
    parents = by_score(
        [parent(f"d{i}", "".join(text), f"标题{i}", score) for i, (text, score) in enumerate(docs)]
    )
    ans = answer_from_parents(q, parents, floor=0.0)
    numbers = [int(n) for n in _CITE.findall(ans.text)]
    assert all(1 <= n <= len(parents) for n in numbers)
    assert set(ans.cited) <= set(numbers)
    for line in ans.text.splitlines():  # 相关段落 / 可能相关: [n] names source n's document
        m = re.match(r"- \[(\d+)\] (\S+)", line)
        if m:
            assert m.group(2).startswith(parents[int(m.group(1)) - 1].document.title)
    for line in lead_of(ans.text).splitlines():  # each source's words end with its own number
        cites = _CITE.findall(line)
        if cites and ans.answerable:
            assert line.rstrip().endswith(f"[{cites[-1]}]")
            # every sentence before the number is that source's (a lead never mixes sources on a line)
            said = re.split(r"\[\d+\]", line)[-2]
            doc = parents[int(cites[-1]) - 1].document.text
            assert all(sentence in doc for sentence in re.findall(r"[^。]+。", said)), ans.text
