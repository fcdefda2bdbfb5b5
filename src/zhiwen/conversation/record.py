"""What the conversation service hands the question log once a turn is answered (#37).

The service builds one :class:`~zhiwen.questionlog.LoggedQuestion` per answer
(:func:`logged_question`: the question as asked and as answered, the app and KB, how it was
answered, its top sources, the latency, the LLM calls and tokens of the whole turn, the caller's
key fingerprint) and gives it to the context's :class:`QuestionRecorder` —
:class:`zhiwen.questionlog.QuestionLog` in a server or a CLI process — which queues it for its
writer thread: recording never waits on a disk.

Example::

    >>> q = logged_question(answer, kb="manual", app="qa", request=request, latency_ms=12.0,
    ...                     usage=LLMUsage(calls=1, prompt_tokens=800, completion_tokens=120))
    >>> q.answer_id == answer.answer_id, q.llm_calls
    (True, 1)
"""

from __future__ import annotations

from typing import Protocol

from zhiwen.answer.model import Answer
from zhiwen.conversation.request import AskRequest
from zhiwen.llm.usage import LLMUsage
from zhiwen.questionlog.model import LoggedQuestion, sources_of

#: the app name the log files a turn under when no app answered it (generic QA)
GENERIC_APP = "qa"


class QuestionRecorder(Protocol):
    """Where answered questions go (:class:`zhiwen.questionlog.QuestionLog` is one): ``record``
    never blocks and never raises."""

    def record(self, q: LoggedQuestion) -> bool: ...


def logged_question(
    answer: Answer,
    *,
    kb: str,
    app: str,
    request: AskRequest,
    latency_ms: float,
    usage: LLMUsage,
    top_sources: int = 5,
) -> LoggedQuestion:
    """The log's record of ``answer`` (stamped: it has its id and type) to ``request``."""
    faq = answer.faq
    return LoggedQuestion(
        answer_id=answer.answer_id,
        kb=kb or next((c.kb for c in answer.citations if c.kb), ""),
        app=app,
        question=request.question,
        answer_type=answer.kind,
        answerable=answer.answerable,
        standalone=answer.standalone_question,
        fallback=answer.extractive_reason,
        faq_id=None if faq is None else faq.entry_id,
        faq_score=None if faq is None else faq.score,
        sources=sources_of(answer.citations, top_sources),
        latency_ms=round(latency_ms, 3),
        llm_calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        caller=request.caller,
        session_id=request.session_id,
    )


__all__ = ["GENERIC_APP", "QuestionRecorder", "logged_question"]
