"""Conversation sessions: a bounded, expiring history and the user's accumulated facts per id.

Backed by ``cachetools.TTLCache`` (at most ``max_sessions`` sessions, each forgotten
``ttl_s`` seconds after its last use) behind a lock; a session keeps its last ``max_turns``
messages. Facts are re-derived from the user's messages, so a follow-up ("那如果首付150万呢？")
changes only what it restates.

Example::

    >>> store = SessionStore(max_sessions=100, ttl_s=1800)
    >>> s = store.get("abc")
    >>> s.add_user("总价300万，首付三成").price
    3000000.0
    >>> store.get("abc").add_user("那如果首付150万呢？").down_payment
    1500000.0
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cachetools import TTLCache

from zhiwen.apps.advisor.facts import UserFacts, extract_facts, facts_from_messages, merge_facts

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_TTL_S = 3600.0
DEFAULT_MAX_TURNS = 20


@dataclass(slots=True)
class Session:
    id: str
    max_turns: int = DEFAULT_MAX_TURNS
    history: deque[dict[str, Any]] = field(default_factory=deque)
    facts: UserFacts = field(default_factory=UserFacts)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.history = deque(self.history, maxlen=self.max_turns)

    def add_user(self, text: str) -> UserFacts:
        """Record a user message and fold its facts into the session's facts."""
        with self.lock:
            self.history.append({"role": "user", "content": text})
            self.facts = merge_facts(self.facts, extract_facts(text))
            return self.facts

    def add_assistant(self, text: str) -> None:
        with self.lock:
            self.history.append({"role": "assistant", "content": text})

    def seed(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Start an empty session from a client-held history (OpenAI messages)."""
        with self.lock:
            if self.history:
                return
            for m in messages:
                if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str):
                    self.history.append({"role": m["role"], "content": m["content"]})
            self.facts = facts_from_messages(self.history)

    def user_texts(self) -> list[str]:
        return [m["content"] for m in self.history if m["role"] == "user"]


class SessionStore:
    """Sessions by id, bounded and expiring; thread-safe."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        ttl_s: float = DEFAULT_TTL_S,
        max_turns: int = DEFAULT_MAX_TURNS,
        timer: Any = time.monotonic,
    ) -> None:
        self.max_turns = max_turns
        self._cache: TTLCache[str, Session] = TTLCache(maxsize=max_sessions, ttl=ttl_s, timer=timer)
        self._lock = threading.Lock()

    def get(self, session_id: str) -> Session:
        """The session ``session_id`` (a new one when unknown or expired); refreshes its TTL."""
        with self._lock:
            session = self._cache.get(session_id)
            if session is None:
                session = Session(session_id, max_turns=self.max_turns)
            self._cache[session_id] = session  # re-set: the TTL counts from the last use
            return session

    def peek(self, session_id: str) -> Session | None:
        with self._lock:
            return self._cache.get(session_id)

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._cache.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            self._cache.expire()
            return len(self._cache)
