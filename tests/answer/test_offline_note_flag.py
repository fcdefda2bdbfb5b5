"""Issue 35: the ``Answer`` says whether its text carries the note that no LLM wrote it, set where
the note is added (the plan's offline answer, the grounding fallback, a stream cut short), and the
OpenAI front door reads that field instead of searching the text for 「大模型」."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from zhiwen.answer.model import Answer, Citation
from zhiwen.answer.qa import AnswerPlan, execute, execute_stream
from zhiwen.api.openai.answer import OFFLINE_NOTE, offline_note
from zhiwen.errors import LLMTimeout
from zhiwen.llm.base import ChatResult, Message

SOURCE = Citation(kb="laws", id="契税法", title="契税法", text="契税税率为百分之三至百分之五。")


def plan(*, sources: Sequence[Citation] = (SOURCE,), llm: bool = True) -> AnswerPlan:
    messages: list[Message] = [
        {"role": "system", "content": "只根据资料回答，用 [n] 标注来源。"},
        {"role": "user", "content": "契税税率是多少？"},
    ]
    return AnswerPlan(
        app="qa",
        route="general",
        sources=list(sources),
        messages=messages if llm else None,
        extractive_body=lambda: "契税税率为百分之三至百分之五 [1]。",
    )


class Replying:
    model = "fake"

    def __init__(self, reply: str, *, fail_after: int | None = None) -> None:
        self.reply = reply
        self.fail_after = fail_after

    def chat(self, messages: Sequence[Message], **_: Any) -> ChatResult:
        return ChatResult(content=self.reply, finish_reason="stop")

    def stream(self, messages: Sequence[Message], **_: Any) -> Iterator[str]:
        for i, ch in enumerate(self.reply):
            if self.fail_after is not None and i >= self.fail_after:
                raise LLMTimeout("slow")
            yield ch


def closing(events: Iterator[Any]) -> Answer:
    answers = [e.answer for e in events if e.answer is not None]
    assert answers
    return answers[-1]


def test_the_offline_answer_carries_its_note_and_says_so() -> None:
    answer = execute(plan(llm=False), None)
    assert (answer.llm_used, answer.extractive_reason, answer.has_offline_note) == (False, "no_llm", True)
    assert "大模型" in answer.answer


def test_no_sources_is_not_an_offline_note() -> None:
    answer = execute(plan(sources=()), None)
    assert answer.extractive_reason == "no_results" and answer.has_offline_note is False


def test_the_grounding_fallback_and_a_written_answer() -> None:
    fallback = execute(plan(), Replying("契税税率为百分之三至百分之五。"))  # no [n]: not shown as grounded
    assert fallback.llm_used is False and fallback.has_offline_note is True
    written = execute(plan(), Replying("契税税率为百分之三至百分之五 [1]。"))
    assert written.llm_used is True and written.has_offline_note is False


def test_a_stream_cut_short_ends_with_a_noted_answer() -> None:
    done = closing(execute_stream(plan(), Replying("契税税率为百分之三至百分之五 [1]。", fail_after=4)))
    assert done.llm_used is False and done.has_offline_note is True


def test_the_front_door_reads_the_field_not_the_text() -> None:
    quoting = Answer(answer="「大模型」一词出自资料 [1]", llm_used=False, extractive_reason="no_llm")
    assert offline_note(quoting) == "\n\n" + OFFLINE_NOTE  # its text names 大模型 but carries no note
    noted = quoting.model_copy(update={"has_offline_note": True})
    assert offline_note(noted) == ""
    assert offline_note(Answer(answer="未找到", extractive_reason="no_results")) == ""
    assert offline_note(Answer(answer="写好的回答 [1]", llm_used=True)) == ""
