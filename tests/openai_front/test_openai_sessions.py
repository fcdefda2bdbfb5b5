"""The advisor keeps one session per chat; client-held history stays the truth."""

from __future__ import annotations

from typing import Any

from zhiwen.api.openai.messages import derive_session_id, parse_messages
from zhiwen.api.openai.schemas import ChatMessage
from zhiwen.conversation.reconcile import reconcile
from zhiwen.conversation.store import Session

FIRST = "总价300万，首付三成，贷款30年，利率3.1%，月供多少？"
FOLLOW_UP = "那如果贷款20年呢？"


def _chat(client: Any, messages: list[dict[str, str]], **kwargs: Any) -> tuple[str, str]:
    reply = client.chat.completions.create(model="advisor", messages=messages, **kwargs)
    return reply.choices[0].message.content, reply.model_extra["zhiwen"]["session_id"]


def test_follow_up_continues_the_session(client: Any) -> None:
    first, session = _chat(client, [{"role": "user", "content": FIRST}], user="alice")
    assert session.startswith("oai-") and "8,967.34" in first
    history = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": first}]
    second, again = _chat(client, [*history, {"role": "user", "content": FOLLOW_UP}], user="alice")
    assert again == session
    assert "20年" in second and "210万" in second  # price and down payment came from turn 1
    # a new chat that opens with the same question starts clean (no facts from the follow-up)
    fresh, same_id = _chat(client, [{"role": "user", "content": FIRST}], user="alice")
    assert same_id == session and fresh == first
    # another user, another session
    _, other = _chat(client, [{"role": "user", "content": FIRST}], user="bob")
    assert other != session
    # an explicit id wins
    _, explicit = _chat(client, [{"role": "user", "content": FIRST}], extra_body={"session_id": "mine"})
    assert explicit == "mine"


def _conv(*turns: tuple[str, str]) -> Any:
    return parse_messages([ChatMessage(role=r, content=c) for r, c in turns], 2000)  # type: ignore[arg-type]


def test_session_id_names_the_conversation() -> None:
    one = _conv(("system", "你是顾问"), ("user", "问题一"))
    two = _conv(("system", "你是顾问"), ("user", "问题一"), ("assistant", "回答"), ("user", "问题二"))
    assert two.question == "问题二" and [m["role"] for m in two.history] == ["system", "user", "assistant"]
    ids = {derive_session_id(c, model="advisor", caller="", user=None) for c in (one, two)}
    assert len(ids) == 1
    other_system = _conv(("system", "你是律师"), ("user", "问题一"))
    assert derive_session_id(other_system, model="advisor", caller="", user=None) not in ids
    assert derive_session_id(one, model="advisor", caller="key2", user=None) not in ids


def _stored(*questions: str) -> Session:
    return Session(tuple({"role": "user", "content": q} for q in questions))


def test_reconcile_drops_only_a_session_the_client_contradicts() -> None:
    """The one reconcile of the conversation service, on what the front door parses."""
    asked = _conv(("user", "问题一"), ("assistant", "答"), ("user", "问题二"))
    assert reconcile(_stored("问题一"), asked.history).kept is True
    # regenerate: the client re-asks 问题二 with only 问题一 before it
    again = reconcile(_stored("问题一", "问题二"), asked.history)
    assert again.kept is False and again.state("advisor") == {}
    assert reconcile(None, _conv(("user", "x")).history).kept is True  # no session: nothing to drop
