"""The conversation service: one read and one write of the session per turn, the follow-up hook
called once, the answer stamped, the client's history the truth (one reconcile)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from zhiwen.answer.events import AppEvent, events_of
from zhiwen.answer.model import Answer
from zhiwen.config import LLMSettings, Settings
from zhiwen.conversation import service
from zhiwen.conversation.model import Standalone, user_questions
from zhiwen.conversation.reconcile import agrees, reconcile
from zhiwen.conversation.record import QuestionRecorder
from zhiwen.conversation.request import AskRequest
from zhiwen.conversation.store import ConversationMemory, Session
from zhiwen.llm.base import ChatModel


def _no_kb(name: str) -> Any:
    raise AssertionError(f"the counter answers from no KB, yet {name} was opened")


@dataclass
class Ctx:
    settings: Settings
    llm: ChatModel | None = None
    open_kb: Callable[[str], Any] = _no_kb
    question_log: QuestionRecorder | None = None


@dataclass
class Counter:
    """An answerer that counts its hook's calls and keeps how many questions it was asked."""

    key: str = "counter"
    resolved: int = 0
    states: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def session_key(self) -> str:
        return self.key

    @property
    def app_name(self) -> str | None:
        return self.key

    @property
    def default_kb(self) -> str | None:
        return None

    def faq_kb(self, request: AskRequest) -> str | None:
        return None

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: Ctx) -> Standalone:
        self.resolved += 1
        self.states.append(dict(state))
        earlier = user_questions(request.history)
        topic = earlier[0] if earlier else request.question
        return Standalone(
            f"{topic}｜{request.question}", request.question, state={"asked": int(state.get("asked", 0)) + 1}
        )

    def answer(self, request: AskRequest, question: Standalone, ctx: Ctx) -> Answer:
        return Answer(answer=f"答：{question.question}")

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: Ctx) -> Iterator[AppEvent]:
        return events_of(self.answer(request, question, ctx))


class CountingStore(ConversationMemory):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.loads = self.saves = 0

    def load(self, caller: str, session_id: str) -> Session | None:
        self.loads += 1
        return super().load(caller, session_id)

    def save(self, caller: str, session_id: str, session: Session) -> None:
        self.saves += 1
        super().save(caller, session_id, session)


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    return Ctx(Settings(home=tmp_path / "home", llm=LLMSettings(base_url=None), _env_file=None))  # type: ignore[call-arg]


@pytest.fixture
def store(tmp_path: Path) -> CountingStore:
    return CountingStore(tmp_path / "sessions.sqlite")


def test_one_read_one_write_and_one_resolve_per_turn(ctx: Ctx, store: CountingStore) -> None:
    answerer = Counter()
    for i, question in enumerate(["红烧肉怎么做？", "要炖多久？", "放几勺糖？"], start=1):
        answer = service.ask(answerer, AskRequest(question=question, session_id="s1"), ctx, store)
        assert (store.loads, store.saves, answerer.resolved) == (i, i, i)
    assert answer.standalone_question == "红烧肉怎么做？｜放几勺糖？" and answer.session_id == "s1"
    held = store.load("", "s1")
    assert held is not None and held.user_texts() == ["红烧肉怎么做？", "要炖多久？", "放几勺糖？"]
    assert held.states == {"counter": {"asked": 3}}


def test_a_stream_reads_and_writes_once_and_its_done_event_is_stamped(ctx: Ctx, store: CountingStore) -> None:
    service.ask(Counter(), AskRequest(question="红烧肉怎么做？", session_id="s2"), ctx, store)
    events = list(service.stream(Counter(), AskRequest(question="要炖多久？", session_id="s2"), ctx, store))
    assert (store.loads, store.saves) == (2, 2)
    done = events[-1]
    assert done.answer is not None and done.answer.session_id == "s2"
    assert (
        done.data["session_id"] == "s2" and done.data["standalone_question"] == "红烧肉怎么做？｜要炖多久？"
    )


def test_without_a_session_nothing_is_read_or_kept(ctx: Ctx, store: CountingStore) -> None:
    history = [{"role": "user", "content": "红烧肉怎么做？"}, {"role": "assistant", "content": "……"}]
    answer = service.ask(Counter(), AskRequest(question="要炖多久？", history=history), ctx, store)
    assert (store.loads, store.saves) == (0, 0)
    assert answer.session_id is None and answer.standalone_question == "红烧肉怎么做？｜要炖多久？"


def test_the_clients_history_wins_over_a_session_it_contradicts(ctx: Ctx, store: CountingStore) -> None:
    answerer = Counter()
    for question in ("问题一", "问题二"):
        service.ask(answerer, AskRequest(question=question, session_id="s"), ctx, store)
    agreeing = [{"role": "user", "content": "问题一"}, {"role": "assistant", "content": "…"}]
    agreeing += [{"role": "user", "content": "问题二"}, {"role": "assistant", "content": "…"}]
    service.ask(answerer, AskRequest(question="问题三", session_id="s", history=agreeing), ctx, store)
    assert answerer.states[-1] == {"asked": 2}  # the session agrees: its state goes on
    regenerated = agreeing[:2]  # the client asks 问题二 again after 问题一 only
    answer = service.ask(
        answerer, AskRequest(question="问题二", session_id="s", history=regenerated), ctx, store
    )
    assert answerer.states[-1] == {} and answer.standalone_question == "问题一｜问题二"
    held = store.load("", "s")
    assert held is not None and held.user_texts() == ["问题一", "问题二"]  # started again from the client's
    assert held.states == {"counter": {"asked": 1}}


def test_each_answerer_keeps_its_own_state_in_one_session(ctx: Ctx, store: CountingStore) -> None:
    one, two = Counter("one"), Counter("two")
    service.ask(one, AskRequest(question="甲", session_id="s"), ctx, store)
    service.ask(two, AskRequest(question="乙", session_id="s"), ctx, store)
    service.ask(one, AskRequest(question="丙", session_id="s"), ctx, store)
    held = store.load("", "s")
    assert held is not None and held.states == {"one": {"asked": 2}, "two": {"asked": 1}}


def test_another_caller_does_not_continue_the_session(ctx: Ctx, store: CountingStore) -> None:
    service.ask(Counter(), AskRequest(question="红烧肉怎么做？", session_id="s", caller="a"), ctx, store)
    answer = service.ask(Counter(), AskRequest(question="要炖多久？", session_id="s", caller="b"), ctx, store)
    assert answer.standalone_question == "要炖多久？｜要炖多久？"


def test_the_home_store_is_the_default(ctx: Ctx) -> None:
    service.ask(Counter(), AskRequest(question="红烧肉怎么做？", session_id="home"), ctx)
    held = ConversationMemory(ctx.settings.home / "sessions.sqlite").load("", "home")
    assert held is not None and held.user_texts() == ["红烧肉怎么做？"]


def test_the_reconcile_rule() -> None:
    assert agrees([], ["一"]) and agrees(["二"], ["一", "二"]) and agrees([" 一"], ["一"])
    assert not agrees(["一", "二"], ["一"]) and not agrees(["一"], ["二"])
    stored = Session(
        ({"role": "user", "content": "一"}, {"role": "assistant", "content": "答"}), {"x": {"k": 1}}
    )
    assert reconcile(None, []).history == [] and reconcile(stored, []).history == list(stored.turns)
    kept = reconcile(stored, [{"role": "user", "content": "一"}])
    assert kept.kept and kept.state("x") == {"k": 1}
    dropped = reconcile(stored, [{"role": "user", "content": "二"}])
    assert (
        not dropped.kept
        and dropped.state("x") == {}
        and dropped.history == [{"role": "user", "content": "二"}]
    )


def test_the_default_hook_leaves_a_question_alone_when_the_stage_is_off(ctx: Ctx) -> None:
    off = Ctx(
        ctx.settings.model_copy(
            update={"conversation": ctx.settings.conversation.model_copy(update={"enabled": False})}
        )
    )
    history = [{"role": "user", "content": "北京大学法学院是哪年成立的？"}]
    assert service.condensed(history, "它在哪个校区？", off).question == "它在哪个校区？"
