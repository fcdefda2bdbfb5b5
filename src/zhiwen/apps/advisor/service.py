"""One chat turn end to end: session facts → plan → standard or discussion mode → events.

:class:`AdvisorService` holds the sessions; :meth:`AdvisorService.chat` returns the turn's
:class:`ChatRun` and an iterator of :class:`AppEvent` (``role_start``, ``role_result``,
``discussion`` …, then ``done``) that fills the run as it is consumed — the SSE route, the
terminal chat and :meth:`AdvisorApp.ask` all go through it.

Example::

    >>> service = AdvisorService()
    >>> question = "总价300万，首付三成，贷款30年，利率3.1%，月供多少？"
    >>> run, events = service.chat(ctx, question, session_id="s1")
    >>> [e.type for e in events][-1]
    'done'
    >>> run.results[0].calls[0].result["monthly_payment"]
    8967.34
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zhiwen.answer.events import AppEvent, collect_stream
from zhiwen.answer.model import Answer, Citation
from zhiwen.apps.advisor.discussion import run_discussion
from zhiwen.apps.advisor.plan import plan_execution
from zhiwen.apps.advisor.roles import load_roles
from zhiwen.apps.advisor.sessions import SessionStore
from zhiwen.apps.advisor.standard import ChatRun, run_standard
from zhiwen.apps.advisor.tools import build_registry
from zhiwen.documents import Chunk, SearchHit
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext

MODES = ("standard", "discussion")


class AdvisorService:
    def __init__(self, sessions: SessionStore | None = None) -> None:
        self.sessions = sessions or SessionStore()

    def chat(
        self,
        ctx: AppContext | None,
        message: str,
        *,
        session_id: str | None = None,
        mode: str = "standard",
        history: Sequence[Mapping[str, Any]] = (),
    ) -> tuple[ChatRun, Iterator[AppEvent]]:
        """Plan the turn now (cheap) and return its run and the lazy event stream."""
        if mode not in MODES:
            raise InvalidParameter(
                f"unknown mode {mode!r}", message=f"mode 取值无效，可选：{'、'.join(MODES)}"
            )
        session = self.sessions.get(session_id or uuid.uuid4().hex)
        if history:
            session.seed(history)
        facts = session.add_user(message)
        llm = ctx.llm if ctx is not None else None
        run = ChatRun(message, facts, build_registry(ctx), llm=llm, user_texts=session.user_texts())
        roles = load_roles()
        plan = plan_execution(message, roles, llm=llm, mode=mode)
        run.plan = plan
        run.llm_calls += plan.llm_calls
        return run, self._events(run, session.id)

    def _events(self, run: ChatRun, session_id: str) -> Iterator[AppEvent]:
        assert run.plan is not None
        steps = (
            run_discussion(run.plan, run) if run.plan.mode == "discussion" else run_standard(run.plan, run)
        )
        yield from steps
        session = self.sessions.get(session_id)
        session.add_assistant(answer_text(run))
        yield AppEvent.done(
            to_answer(run, session_id),
            {"session_id": session_id, "plan": run.plan.to_dict(), "llm_calls": run.llm_calls},
        )

    def answer(self, ctx: AppContext | None, message: str, **kwargs: Any) -> tuple[ChatRun, Answer]:
        run, events = self.chat(ctx, message, **kwargs)
        return run, collect_stream(events)


def answer_text(run: ChatRun) -> str:
    """The role messages as readable sections ("### 💰 财务顾问\\n…")."""
    parts: list[str] = []
    if run.discussion:
        lines = [
            f"- **{m['from_name']} → {m['to_name']}**（第{m['round']}轮）：{m['content']}"
            for m in run.discussion
        ]
        parts.append("### 💬 专家讨论\n\n" + "\n".join(lines))
    parts += [f"### {r.role.icon} {r.role.name}\n{r.content}" for r in run.results]
    return "\n\n".join(parts)


def citations(run: ChatRun) -> list[Citation]:
    out: list[Citation] = []
    seen: set[str] = set()
    for call in run.all_calls():
        if call.name not in ("search_policy", "search_faq") or not call.ok:
            continue
        for hit in call.result.get("hits", []):
            if hit["id"] in seen:
                continue
            seen.add(hit["id"])
            chunk = Chunk(
                id=hit["id"],
                doc_id=hit["id"].split("#")[0],
                text=hit["text"],
                title=hit["title"],
                metadata={k: hit[k] for k in ("city", "source", "article") if hit.get(k)},
            )
            out.append(
                Citation.from_hit(SearchHit(chunk=chunk, score=hit["score"]), kb=call.result.get("kb"))
            )
    return out


def to_answer(run: ChatRun, session_id: str) -> Answer:
    written = [r.written for r in run.results if r.written is not None]
    llm_used = any(w.llm_used for w in written)
    reasons = [w.fallback_reason for w in written if w.fallback_reason]
    params = next(
        (c.result.get("params") or {} for c in run.all_calls() if c.name == "search_policy" and c.ok), {}
    )
    return Answer(
        answer=answer_text(run),
        citations=citations(run),
        llm_used=llm_used,
        extractive_reason=None if llm_used else (reasons[0] if reasons else "no_llm"),
        params=params,
        session_id=session_id,
        data={
            "session_id": session_id,
            "plan": run.plan.to_dict() if run.plan else None,
            "roles": [r.event_data() for r in run.results],
            "tool_calls": [c.to_dict() for c in run.all_calls()],
            "discussion": run.discussion,
            "consensus": run.consensus,
            "facts": run.facts.known(),
            "llm_calls": run.llm_calls,
        },
    )
