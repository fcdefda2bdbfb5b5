"""Conversation sessions: a bounded, expiring history and the user's accumulated facts per
(caller, id).

Two stores keep the same :class:`Session` objects:

* :class:`DurableSessionStore` (the default) — the SQLite sessions of ``ZHIWEN_HOME``
  (:class:`~zhiwen.appkit.sessions.ConversationMemory`): the server and the CLI share them, so
  ``zhiwen advisor chat --session s1 -m …`` continues across runs. The facts are the session's
  state (JSON), so they outlive the trimmed history.
* :class:`SessionStore` — in memory (``cachetools.TTLCache``), for tests and embedding.

Both are **bounded** (sessions, last messages), **expiring**, and **bound to the caller**: a
session is keyed by (caller, id), the caller being the API key's fingerprint ("" without keys),
so another key cannot read it. A follow-up ("那如果首付150万呢？") changes only what it restates.

Example::

    >>> store = SessionStore(max_sessions=100, ttl_s=1800)
    >>> s = store.get("abc")
    >>> s.add_user("总价300万，首付三成").price
    3000000.0
    >>> store.get("abc").add_user("那如果首付150万呢？").down_payment
    1500000.0
    >>> store.peek("abc", caller="another-key") is None
    True
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cachetools import TTLCache

from zhiwen.appkit.sessions import ConversationMemory, memory_for
from zhiwen.apps.advisor.facts import UserFacts, extract_facts, facts_from_messages, merge_facts

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_TTL_S = 3600.0
DEFAULT_MAX_TURNS = 20
#: the advisor's rows in the shared session file: apart from the turns the interfaces keep
KEY_PREFIX = "advisor/"


def _messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": m["role"], "content": m["content"]}
        for m in messages
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
    ]


@dataclass(slots=True)
class Session:
    id: str
    max_turns: int = DEFAULT_MAX_TURNS
    history: deque[dict[str, Any]] = field(default_factory=deque)
    facts: UserFacts = field(default_factory=UserFacts)
    caller: str = ""
    #: the specialist roles of the last answer (re-run when a follow-up restates a fact)
    roles: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: messages added since the session was loaded, and whether its history was replaced
    added: list[dict[str, Any]] = field(default_factory=list, repr=False)
    replaced: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.history = deque(self.history, maxlen=self.max_turns)

    def add_user(self, text: str) -> UserFacts:
        """Record a user message and fold its facts into the session's facts."""
        with self.lock:
            self._add({"role": "user", "content": text})
            self.facts = merge_facts(self.facts, extract_facts(text))
            return self.facts

    def add_assistant(self, text: str) -> None:
        with self.lock:
            self._add({"role": "assistant", "content": text})

    def _add(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        self.added.append(message)

    def seed(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Start an empty session from a client-held history (OpenAI messages)."""
        with self.lock:
            if self.history:
                return
            self._reset(_messages(messages))

    def follow(self, messages: Iterable[Mapping[str, Any]]) -> bool:
        """Take the client's history as the truth: keep the session when its user turns are the
        tail of the client's, else start it again from the client's (an edited or regenerated
        turn, another chat under the same id). True when the session was started again."""
        client = _messages(messages)
        with self.lock:
            stored = [m["content"].strip() for m in self.history if m["role"] == "user"]
            users = [m["content"].strip() for m in client if m["role"] == "user"]
            if stored and len(stored) <= len(users) and stored == users[len(users) - len(stored) :]:
                return False
            self._reset(client)
            return True

    def _reset(self, messages: list[dict[str, Any]]) -> None:
        self.history = deque(messages, maxlen=self.max_turns)
        self.facts = facts_from_messages(messages)
        self.roles = []
        self.added, self.replaced = [], True

    def user_texts(self) -> list[str]:
        return [m["content"] for m in self.history if m["role"] == "user"]

    def state(self) -> dict[str, Any]:
        """What the durable store keeps besides the history: the facts."""
        return {"facts": self.facts.model_dump(mode="json"), "roles": list(self.roles)}


class AdvisorSessions(Protocol):
    """What :class:`~zhiwen.apps.advisor.service.AdvisorService` needs of a session store (it is
    also the app's :class:`~zhiwen.appkit.app.ConversationStore`)."""

    def bind(self, home: Path) -> None: ...

    def get(self, session_id: str, caller: str = "") -> Session: ...

    def save(self, session: Session) -> None: ...

    def peek(self, session_id: str, caller: str = "") -> Session | None: ...

    def drop(self, session_id: str, caller: str = "") -> None: ...


class SessionStore:
    """Sessions by (caller, id) in memory, bounded and expiring; thread-safe."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        ttl_s: float = DEFAULT_TTL_S,
        max_turns: int = DEFAULT_MAX_TURNS,
        timer: Any = time.monotonic,
    ) -> None:
        self.max_turns = max_turns
        self._cache: TTLCache[tuple[str, str], Session] = TTLCache(
            maxsize=max_sessions, ttl=ttl_s, timer=timer
        )
        self._lock = threading.Lock()

    def bind(self, home: Path) -> None:
        """Nothing to bind: the sessions live in this process."""

    def get(self, session_id: str, caller: str = "") -> Session:
        """The session ``session_id`` (a new one when unknown or expired); refreshes its TTL."""
        with self._lock:
            session = self._cache.get((caller, session_id))
            if session is None:
                session = Session(session_id, max_turns=self.max_turns, caller=caller)
            self._cache[(caller, session_id)] = session  # re-set: the TTL counts from the last use
            return session

    def save(self, session: Session) -> None:
        with self._lock:
            session.added, session.replaced = [], False
            self._cache[(session.caller, session.id)] = session

    def peek(self, session_id: str, caller: str = "") -> Session | None:
        with self._lock:
            return self._cache.get((caller, session_id))

    def drop(self, session_id: str, caller: str = "") -> None:
        with self._lock:
            self._cache.pop((caller, session_id), None)

    def __len__(self) -> int:
        with self._lock:
            self._cache.expire()
            return len(self._cache)


class DurableSessionStore:
    """Sessions in ``<ZHIWEN_HOME>/sessions.sqlite`` (shared by the server and the CLI).

    The home is the one of the last context the service answered in (:meth:`bind`); before any,
    the configured ``ZHIWEN_HOME``. A session is loaded for a turn and saved when the turn is
    done: its new messages appended (the file keeps the last ``max_turns``) and its facts stored.
    """

    def __init__(self, home: Path | None = None, *, memory: ConversationMemory | None = None) -> None:
        self._home = home
        self._fixed = memory  # a given memory (its own bounds) instead of the home's
        self._lock = threading.Lock()

    def bind(self, home: Path) -> None:
        with self._lock:
            self._home = home

    def _memory(self) -> ConversationMemory:
        if self._fixed is not None:
            return self._fixed
        with self._lock:
            home = self._home
        if home is None:
            from zhiwen.config import get_settings

            home = get_settings().home
        return memory_for(Path(home))

    def _load(self, session_id: str, caller: str) -> Session | None:
        memory = self._memory()
        key = KEY_PREFIX + session_id
        history, state = memory.history(caller, key), memory.state(caller, key)
        if not history and not state:
            return None
        facts = UserFacts.model_validate(state.get("facts") or {})
        if not state.get("facts"):
            facts = facts_from_messages(history)
        roles = [str(r) for r in state.get("roles") or []]
        return Session(
            session_id,
            max_turns=memory.max_turns,
            history=deque(history),
            facts=facts,
            caller=caller,
            roles=roles,
        )

    def get(self, session_id: str, caller: str = "") -> Session:
        session = self._load(session_id, caller)
        if session is None:
            session = Session(session_id, max_turns=self._memory().max_turns, caller=caller)
        return session

    def save(self, session: Session) -> None:
        memory = self._memory()
        key = KEY_PREFIX + session.id
        with session.lock:
            if session.replaced:
                memory.drop(session.caller, key)
                messages = list(session.history)
            else:
                messages = list(session.added)
            memory.append(session.caller, key, messages, state=session.state())
            session.added, session.replaced = [], False

    def peek(self, session_id: str, caller: str = "") -> Session | None:
        return self._load(session_id, caller)

    def drop(self, session_id: str, caller: str = "") -> None:
        self._memory().drop(caller, KEY_PREFIX + session_id)
