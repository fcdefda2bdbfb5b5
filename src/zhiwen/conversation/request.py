"""A question with the conversation so far: what every interface hands the conversation service.

``history`` is what the client sent (OpenAI messages, oldest first); with a ``session_id`` and no
history the service reads the session's turns instead (:mod:`.service`). ``caller`` binds the
session to who asks (a fingerprint of the API key, "" without keys).

Example::

    >>> request = AskRequest(question="要炖多久？", kb="recipes", session_id="s1")
    >>> request.model_copy(update={"history": [{"role": "user", "content": "红烧肉怎么做？"}]}).history[0]
    {'role': 'user', 'content': '红烧肉怎么做？'}
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AskRequest(BaseModel):
    """A question to an answerer, with the conversation so far (OpenAI message format)."""

    question: str
    history: list[dict[str, Any]] = Field(default_factory=list)
    session_id: str | None = None
    #: who asks (a fingerprint of the API key; "" without keys): sessions are bound to it
    caller: str = ""
    kb: str | None = None  # None: the app's own default KB
    top_k: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # app-specific (mode, as_of, …)


__all__ = ["AskRequest"]
