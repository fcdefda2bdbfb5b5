"""The request fields every route validates alike: a question, a KB name, the history.

* :data:`Question` — a ``str`` for request models: stripped, non-empty, at most
  ``settings.api.max_question_chars`` characters (over → 422 / 3003 ``问题过长``); the serving
  app's settings come from :data:`current_settings_var` (set by the request middleware, since a
  validator has no request).
* :data:`KBName` — a KB name (the pattern of :class:`zhiwen.kb.KBConfig`).
* :class:`ChatTurn` — one message of the conversation so far, as chat clients send it; a route
  takes at most :data:`MAX_HISTORY_MESSAGES` of them.

Example::

    class AskIn(BaseModel):
        kb: KBName = "manual"
        question: Question
        history: list[ChatTurn] = Field(default_factory=list, max_length=MAX_HISTORY_MESSAGES)
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from zhiwen.config import Settings, get_settings
from zhiwen.kb.config import NAME_PATTERN
from zhiwen.validation import QuestionRefused, question_text

#: set by the request middleware to the serving app's settings (validators have no Request)
current_settings_var: ContextVar[Settings | None] = ContextVar("zhiwen_current_settings", default=None)


def current_settings() -> Settings:
    return current_settings_var.get() or get_settings()


def _check_question(value: str) -> str:
    """The one check of a question (:func:`zhiwen.validation.question_text`) inside a model."""
    try:
        return question_text(value, current_settings().api.max_question_chars)
    except QuestionRefused as exc:
        raise exc.as_validation_error() from None


Question = Annotated[str, AfterValidator(_check_question)]
NAME_RE = re.compile(NAME_PATTERN)
KBName = Annotated[str, Field(pattern=NAME_PATTERN)]

#: characters kept of each message of a request's history (the stage reads only their start)
HISTORY_MESSAGE_CHARS = 4000
#: messages of history a request may carry (the stage reads only the last few turns)
MAX_HISTORY_MESSAGES = 40


def _cut(text: str) -> str:
    return text[:HISTORY_MESSAGE_CHARS]


class ChatTurn(BaseModel):
    """One message of the conversation so far, as chat clients send it (OpenAI's shape, text only)."""

    role: Literal["system", "developer", "user", "assistant", "tool"] = Field(description="角色")
    content: Annotated[str, AfterValidator(_cut)] = Field("", description="文本（过长的部分不读取）")


__all__ = [
    "HISTORY_MESSAGE_CHARS",
    "MAX_HISTORY_MESSAGES",
    "ChatTurn",
    "KBName",
    "Question",
    "current_settings",
    "current_settings_var",
]
