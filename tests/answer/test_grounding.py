"""An LLM reply is shown as grounded only when it is (#31): the check, and the answer stage's
fallback with its reason — one call and streamed — against the scripted fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.answer.grounding import check_answer, drop_out_of_range, is_chinese, mostly_latin, valid_markers
from zhiwen.answer.qa import answer_question, stream_question
from zhiwen.documents import Document
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.parse import ThinkFilter, strip_think
from zhiwen.metrics import EXTRACTIVE_ANSWERS

DOCS = [
    Document(id="start", title="快速开始", text="# 快速开始\n\n用 zhiwen index 命令创建知识库并导入文档。"),
    Document(id="serve", title="服务", text="# 服务\n\n用 zhiwen serve 启动 HTTP 服务，默认端口 8000。"),
]
QUESTION = "怎么创建知识库"
LEAD = "用 zhiwen index 命令创建知识库并导入文档。[1]"  # the offline answer's first line
GOOD = "用 zhiwen index 命令创建知识库 [1]。"

# each failure kind: the reply (and how it ended) → the reason the answer carries
FAILURES = {
    "llm_uncited": Reply("用 zhiwen index 命令创建知识库。"),
    "llm_out_of_range_only": Reply("用 zhiwen index 命令创建知识库 [7]。"),
    "llm_wrong_language": Reply("Use the zhiwen index command to create a knowledge base [1]."),
    "llm_truncated": Reply("用 zhiwen index 命令创建知识库 [1]，然后", finish_reason="length"),
    "empty": Reply("<think>先想想怎么回答</think>"),
}
REASON = {"llm_out_of_range_only": "llm_uncited"}


@pytest.fixture
def kb(zhiwen_home: Path) -> Iterator[KnowledgeBase]:
    kb = open_kb("demo", create=True, embedder="hash")
    kb.index_documents(DOCS, progress=False)
    yield kb


def _count(reason: str) -> float:
    return EXTRACTIVE_ANSWERS.labels(app="qa", reason=reason)._value.get()


# -- the check ---------------------------------------------------------------------------------
def test_check_passes_a_cited_chinese_answer_unchanged() -> None:
    verdict = check_answer(GOOD, sources=2, question=QUESTION, finish_reason="stop")
    assert verdict.ok and verdict.text == GOOD and verdict.dropped == ()


def test_markers() -> None:
    assert valid_markers("见 [1][2]，另见［3］与 [1, 9]", 3) == [1, 2, 3, 1]
    assert drop_out_of_range("免签 [7]。见[1, 9]和 [2]", 2) == ("免签。见[1]和 [2]", (7, 9))
    assert check_answer("免签 [0]。", sources=2, question="可以免签吗").reason == "llm_uncited"


def test_language() -> None:
    assert is_chinese("zhiwen index 怎么用") and not is_chinese("What does 免签 mean?")
    assert not mostly_latin("用 `zhiwen index --kb manual ./docs --fmt markdown` 导入 [1]")
    assert mostly_latin("You can enter China visa-free for 30 days [1].")
    # an English question may be answered in English
    assert check_answer("Visa-free for 30 days [1].", sources=1, question="How long visa-free?").ok


def test_numbers_must_come_from_the_facts() -> None:
    from zhiwen.answer.grounding import number_facts

    facts = number_facts([{"price": 450, "area": 89.5, "unit_price": 50279}], ["三室，预算500万"])
    assert check_answer("第1套总价450万，89.5㎡，单价约5.03万", sources=1, cite=False, numbers=facts).ok
    bad = check_answer("第1套总价420万，月供约1.2万", sources=1, cite=False, numbers=facts)
    assert bad.reason == "llm_unsupported_numbers" and bad.unsupported == ("420万", "1.2万")


_TEXT = st.text(alphabet=st.sampled_from(list("答案<>/thinkab [1]。\n")), max_size=40)


@given(_TEXT, st.lists(st.integers(min_value=1, max_value=5), max_size=8))
def test_the_stream_filter_shows_what_strip_think_keeps(text: str, cuts: list[int]) -> None:
    """Whatever way a reply is cut into deltas, the filter shows what strip_think keeps."""
    f, shown, at = ThinkFilter(), [], 0
    for n in cuts:
        shown.append(f.feed(text[at : at + n]))
        at += n
    shown.append(f.feed(text[at:]) + f.flush())
    if "</think>" not in text.split("<think>", 1)[0]:  # a leading stray close is read only whole
        assert "".join(shown).strip() == strip_think(text)


# -- the answer stage: one call ----------------------------------------------------------------
def test_a_cited_chinese_answer_passes(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply(GOOD))
    ans = answer_question(kb, QUESTION, llm=client)
    assert ans.llm_used and ans.extractive_reason is None and ans.answer == GOOD


def test_think_and_stray_markers_are_dropped(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply("<think>用户问的是创建</think>\n\n用 zhiwen index 命令创建知识库 [1][9]。"))
    ans = answer_question(kb, QUESTION, llm=client)
    assert ans.llm_used and ans.answer == "用 zhiwen index 命令创建知识库 [1]。"


@pytest.mark.parametrize("kind", list(FAILURES))
def test_failures_fall_back_with_the_reason(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI, kind: str
) -> None:
    reason = REASON.get(kind, kind)
    before = _count(reason)
    fake_llm.script(FAILURES[kind])
    ans = answer_question(kb, QUESTION, llm=client)
    assert not ans.llm_used and ans.extractive_reason == reason
    assert (
        ans.answer.startswith("用 zhiwen index 命令创建知识库并导入文档。[1]") and "摘自知识库" in ans.answer
    )
    assert _count(reason) == before + 1


# -- the answer stage: streamed ----------------------------------------------------------------
def test_stream_of_a_cited_answer_is_unchanged(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply(GOOD, chunk_chars=3))
    events = list(stream_question(kb, QUESTION, llm=client))
    assert "".join(e.text for e in events) == GOOD
    done = events[-1]
    assert done.answer is not None and done.answer.llm_used and done.answer.answer == GOOD
    assert "answer" not in done.data  # the deltas are the answer: nothing to replace


def test_stream_never_shows_think(kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("<think>想一想</think>用 zhiwen index 命令创建知识库 [1][5]。", chunk_chars=3))
    events = list(stream_question(kb, QUESTION, llm=client))
    streamed = "".join(e.text for e in events)
    assert "think" not in streamed and "想一想" not in streamed
    done = events[-1]
    assert done.answer is not None and done.answer.llm_used
    # the stray [5] was streamed; the done frame carries the tidied text to show instead
    assert done.data["answer"] == done.answer.answer == "用 zhiwen index 命令创建知识库 [1]。"


@pytest.mark.parametrize("kind", list(FAILURES))
def test_stream_failures_fall_back_with_the_reason(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI, kind: str
) -> None:
    reason = REASON.get(kind, kind)
    before = _count(reason)
    reply = FAILURES[kind]
    reply.chunk_chars = 5
    fake_llm.script(reply)
    events = list(stream_question(kb, QUESTION, llm=client))
    done = events[-1]
    assert done.type == "done" and done.answer is not None
    assert not done.answer.llm_used and done.data["extractive_reason"] == reason
    offline = done.answer.answer
    assert offline.startswith(LEAD) and "摘自知识库" in offline
    streamed = "".join(e.text for e in events)
    if reason == "empty":  # nothing was shown: the offline answer is the stream
        assert streamed == offline and "answer" not in done.data
    else:  # the reply was shown; the stream says it is not the answer, and done replaces it
        assert streamed.index("未被采用") < streamed.rindex(LEAD)
        assert done.data["answer"] == offline
    assert _count(reason) == before + 1


def test_every_reason_reads_as_chinese_everywhere() -> None:
    """The CLI's view and the web UI's flag say each reason (not the fallback 「未使用大模型」)."""
    from zhiwen.answer.extractive import extractive_note
    from zhiwen.answer.grounding import GROUNDING_REASONS
    from zhiwen.clikit.view import reason_text

    bubble = (Path(__file__).parents[2] / "src/zhiwen/webui/js/bubble.js").read_text("utf-8")
    for code, label in GROUNDING_REASONS.items():
        assert reason_text(code) == label and f'{code}: "{label}"' in bubble
        assert extractive_note(code) == f"（{label}，以下内容直接摘自知识库）"


# Gemma 3 270M's reply to 「契税法规定契税的纳税人是谁？」 (#31 bench): the prompt, [1] and all
ECHO = (
    "You are a domain expert in 知识库问答. 你是知识库问答方面的专家，回答准确、简洁、有条理。"
    "只依据用户给出的上下文回答，不编造上下文之外的事实；引用时在句末用 [编号] 标注所依据的上下文；"
    "上下文中没有答案时，直接说明知识库中没有相关信息。\n\nContext:\n[1] 中华人民共和国契税法\n"
    "第十条 纳税人应当在依法办理土地、房屋权属登记手续前申报缴纳契税。"
)


def test_an_echoed_prompt_is_not_an_answer(
    kb: KnowledgeBase, client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply(ECHO))
    ans = answer_question(kb, QUESTION, llm=client)
    assert not ans.llm_used and ans.extractive_reason == "llm_echoed_prompt"
    # an answer that only uses the prompt's words is no echo
    fake_llm.script(Reply("知识库中没有相关信息 [1]。"))
    assert answer_question(kb, QUESTION, llm=client).llm_used
