"""One typed event for every answer stream (QA answers, agent roles, chat front doors).

An :class:`AppEvent` is a type name plus the JSON object its SSE frame carries (``data``). The
three events every stream has also carry their typed objects, so an interface never parses a
frame back: ``sources`` carries the :class:`~zhiwen.answer.model.Citation` list, ``delta`` its
text, and ``done`` the finished :class:`~zhiwen.answer.model.Answer` — the same object the
non-streamed call returns. Apps add their own events (the advisor's ``role_start`` …); how those
read as plain text is the app's hook (:meth:`zhiwen.appkit.app.BaseApp.event_text`).

Example::

    >>> e = AppEvent.delta("你好")
    >>> e.to_dict()
    {'type': 'delta', 'text': '你好'}
    >>> answer = collect_stream(iter([AppEvent.sources([]), e, AppEvent.done(Answer(answer="你好"))]))
    >>> answer.answer
    '你好'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiwen.answer.model import Answer, Citation


@dataclass(frozen=True, slots=True)
class AppEvent:
    type: str  # sources | delta | done | error | meta | role_start | role_result | discussion …
    data: dict[str, Any] = field(default_factory=dict)
    #: ``sources``: the citations, typed (``data`` holds their wire form)
    citations: tuple[Citation, ...] | None = None
    #: ``done``: the whole answer, as the non-streamed call returns it
    answer: Answer | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}

    @classmethod
    def sources(cls, citations: Sequence[Citation], data: dict[str, Any] | None = None) -> AppEvent:
        """The sources, first; ``data`` overrides their wire form (an app's own fields)."""
        wire = data if data is not None else {"sources": [c.model_dump() for c in citations]}
        return cls("sources", wire, citations=tuple(citations))

    @classmethod
    def delta(cls, text: str) -> AppEvent:
        return cls("delta", {"text": text})

    @classmethod
    def done(cls, answer: Answer, data: dict[str, Any] | None = None) -> AppEvent:
        """The closing event; ``data`` overrides its wire form (default: the answer's fields)."""
        return cls("done", answer.done_fields() if data is None else data, answer=answer)

    @property
    def text(self) -> str:
        """A ``delta``'s text ("" for every other event)."""
        return str(self.data.get("text") or "") if self.type == "delta" else ""


def events_of(answer: Answer) -> Iterator[AppEvent]:
    """A finished answer as a stream: its sources, its text in one delta, done."""
    yield AppEvent.sources(answer.citations)
    yield AppEvent.delta(answer.answer)
    yield AppEvent.done(answer)


def collect_stream(events: Iterable[AppEvent]) -> Answer:
    """The answer a stream closes with (its ``done`` event), or one folded from its deltas."""
    citations: list[Citation] = []
    parts: list[str] = []
    for event in events:
        if event.answer is not None:
            return event.answer
        if event.citations is not None:
            citations = list(event.citations)
        parts.append(event.text)
    return Answer(answer="".join(parts), citations=citations)
