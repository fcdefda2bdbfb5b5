"""What the conversation stage works on and what it returns.

A chat client sends the history as OpenAI messages; :func:`user_questions` keeps what the user
asked, in order. :class:`Standalone` is the stage's answer: the question retrieval should search,
what it carried over from earlier turns, and whether it changed anything.

Example::

    >>> user_questions([{"role": "user", "content": "北京大学法学院是哪年成立的？"},
    ...                 {"role": "assistant", "content": "1904年 [1]"}])
    ['北京大学法学院是哪年成立的？']
    >>> Standalone.unchanged("怎么创建知识库？").changed
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: how the standalone question was made
Method = str  # "unchanged" | "slot" | "substitution" | "anaphora" | "generic" | "part" | "subject" | "llm"


@dataclass(frozen=True, slots=True)
class Standalone:
    """The question as it would be asked without the conversation before it."""

    question: str  # what retrieval searches (== original when nothing was carried over)
    original: str  # what the user typed
    method: Method = "unchanged"
    topic: str | None = None  # the entity the conversation is about, when one was carried over
    replaced: str | None = None  # what in the question (or the earlier question) it replaced
    carried: dict[str, Any] = field(default_factory=dict)  # app slots (country, dish, filters …)
    llm_fallback: str | None = None  # why the LLM's rewrite was not taken (condense.rejection)
    #: what the answerer keeps of the conversation after this turn (its state in the session,
    #: stored by the conversation service): its follow-up hook sets it; answering may add what
    #: only the answer knows (the advisor's roles)
    state: dict[str, Any] = field(default_factory=dict, compare=False)
    #: names retrieval should favour (the conversation's topic, while the question names no other
    #: entity): documents whose title names one rank higher (:mod:`zhiwen.retrieve.focus`)
    focus: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.question != self.original

    @classmethod
    def unchanged(cls, question: str) -> Standalone:
        return cls(question=question, original=question)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "original": self.original,
            "changed": self.changed,
            "method": self.method,
            "topic": self.topic,
            **({"carried": self.carried} if self.carried else {}),
            **({"llm_fallback": self.llm_fallback} if self.llm_fallback else {}),
            **({"focus": list(self.focus)} if self.focus else {}),
        }


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text (plain content, or the text parts of a multi-part one)."""
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, Sequence):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return "\n".join(str(p) for p in parts if p).strip()
    return ""


def user_questions(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the user asked before, oldest first (system, assistant and tool messages dropped)."""
    return [t for t in (message_text(m) for m in history if m.get("role") == "user") if t]

