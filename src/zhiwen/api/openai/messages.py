"""From OpenAI ``messages`` to an app's :class:`AskRequest`: question, history, session id.

* **Question**: the last message, which must be the user's (text parts joined; images ignored).
* **History**: every earlier message (system and developer prompts included) as
  ``{"role", "content"}`` with text content; apps that hold a conversation read it.
* **Session id** (apps that keep a conversation, e.g. facts per chat): an explicit ``session_id`` (body
  extension) or ``X-Session-Id`` header wins. Otherwise it is derived from what names a
  conversation in a stateless client: the caller (a fingerprint of the API key and the
  ``user`` field), the model, the system prompt and the FIRST user message —
  ``oai-`` + 24 hex characters of their SHA-256. Every turn of one chat gets the same id.
* **Reconciling** is the conversation service's one rule
  (:func:`zhiwen.conversation.reconcile.reconcile`): clients own the history, so a regenerated
  answer, an edited message or a new chat that opens with the same question must not inherit
  stale facts. When the stored session disagrees with the client's earlier user messages, it is
  started again from the client's history.

Example::

    >>> conv = parse_messages([ChatMessage(role="system", content="你是助手"),
    ...                        ChatMessage(role="user", content="总价300万，月供多少？")], 2000)
    >>> conv.question, conv.history
    ('总价300万，月供多少？', [{'role': 'system', 'content': '你是助手'}])
    >>> derive_session_id(conv, model="demo", caller="", user=None)[:4]
    'oai-'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiwen.api.openai.errors import OpenAIError
from zhiwen.api.openai.schemas import ChatMessage
from zhiwen.validation import QuestionRefused, question_text


@dataclass(slots=True)
class ParsedMessages:
    """The question (the last user message) and the messages before it."""

    question: str
    history: list[dict[str, Any]] = field(default_factory=list)

    def earlier_user_texts(self) -> list[str]:
        return [m["content"].strip() for m in self.history if m["role"] == "user"]

    def system_text(self) -> str:
        return "\n".join(m["content"] for m in self.history if m["role"] in ("system", "developer"))

    def texts(self) -> list[str]:
        return [m["content"] for m in self.history] + [self.question]


def parse_messages(messages: Sequence[ChatMessage], max_question_chars: int) -> ParsedMessages:
    """The question and the history; 400 when the last message is not a usable user message."""
    last = messages[-1]
    if last.role != "user":
        raise OpenAIError(
            f"last message has role {last.role!r}",
            message="messages 的最后一条必须是用户（user）消息",
            param="messages",
        )
    try:
        question = question_text(last.text(), max_question_chars)
    except QuestionRefused as exc:
        raise OpenAIError(exc.detail, message=exc.message, param="messages") from None
    history = [{"role": m.role, "content": m.text()} for m in messages[:-1]]
    return ParsedMessages(question=question, history=[m for m in history if m["content"]])


def derive_session_id(conversation: ParsedMessages, *, model: str, caller: str, user: str | None) -> str:
    users = conversation.earlier_user_texts()
    first = users[0] if users else conversation.question
    key = json.dumps([caller, user or "", model, conversation.system_text(), first], ensure_ascii=False)
    return "oai-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
