"""Conversations that outlive a request: the turns of each session and each answerer's own state
in it, durable under ``ZHIWEN_HOME``, bounded, expiring, and bound to their caller.

A client that sends the whole history (every OpenAI chat client) needs the turns of none of this;
a client that sends only a ``session_id`` — ``curl``, the CLI's ``--session``, an app route —
gets the conversation back from here. Besides the turns a session keeps what each answerer
carries from turn to turn (its *state*, by the answerer's :attr:`session_key`: the listings'
questions asked, the advisor's facts). One SQLite file (``<home>/sessions.sqlite``) serves the
server and the CLI alike, so ``zhiwen advisor chat --session s1`` continues across runs.

* **One read, one write per turn**: :meth:`ConversationMemory.load` and
  :meth:`ConversationMemory.save` (the conversation service calls each once).
* **Bound to the caller**: a session is keyed by ``(caller, session_id)``; the caller is the
  fingerprint of the API key (empty without keys), so another key cannot read it.
* **Bounded**: at most ``max_sessions`` sessions (the least recently used go first) and the last
  ``max_turns`` messages of each; **expiring**: a session unused for ``ttl_s`` seconds is gone.
* **Earlier files keep working**: the advisor used to keep its sessions in rows of their own
  (``advisor/<id>``, its facts as the whole state); the first open of a file moves them into
  the session's row, under the advisor's key (:func:`migrate`).

Example::

    >>> memory = ConversationMemory(tmp_path / "sessions.sqlite")
    >>> memory.save("", "s1", Session(turns=({"role": "user", "content": "红烧肉怎么做？"},
    ...                                       {"role": "assistant", "content": "……"})))
    >>> memory.load("", "s1").user_texts()
    ['红烧肉怎么做？']
    >>> memory.load("another-key", "s1") is None
    True
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zhiwen.versions import check_sqlite, current

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_TTL_S = 7 * 24 * 3600.0
DEFAULT_MAX_TURNS = 20
#: seconds between two sweeps of expired sessions
SWEEP_EVERY_S = 60.0
#: the file's layout: 1 = every answerer's state inside its session's row
SCHEMA_VERSION = current("sessions")
#: the rows the advisor kept apart before layout 1, and the key its state is kept under now
ADVISOR_PREFIX, ADVISOR_KEY = "advisor/", "advisor"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    caller TEXT NOT NULL,
    id TEXT NOT NULL,
    used REAL NOT NULL,
    messages TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (caller, id)
)
"""


def turn_messages(messages: Iterable[Mapping[str, Any]]) -> tuple[dict[str, str], ...]:
    """The user and assistant messages with text (what a session keeps of a conversation)."""
    return tuple(
        {"role": str(m["role"]), "content": m["content"]}
        for m in messages
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
    )


@dataclass(frozen=True, slots=True)
class Session:
    """One conversation: its turns (oldest first) and each answerer's state, by session key."""

    turns: tuple[dict[str, str], ...] = ()
    states: Mapping[str, dict[str, Any]] = field(default_factory=dict)

    def user_texts(self) -> list[str]:
        return [m["content"] for m in self.turns if m["role"] == "user"]


class SessionStore(Protocol):
    """Where the conversation service keeps sessions, by caller and id."""

    def load(self, caller: str, session_id: str) -> Session | None: ...

    def save(self, caller: str, session_id: str, session: Session) -> None: ...


class ConversationMemory:
    """Sessions in one SQLite file; thread- and process-safe (SQLite's own locking)."""

    def __init__(
        self,
        path: Path,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        ttl_s: float = DEFAULT_TTL_S,
        max_turns: int = DEFAULT_MAX_TURNS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.max_turns = max_turns
        self._clock = clock
        self._lock = threading.Lock()
        self._local = threading.local()  # one connection per thread, opened once
        self._swept = float("-inf")
        path.parent.mkdir(parents=True, exist_ok=True)
        db = self._connect()
        db.execute("PRAGMA journal_mode=WAL")  # persistent: readers never wait for a writer
        with self._lock:
            check_sqlite(db, "sessions", path)  # layout 0 → 1 runs :func:`migrate`
        db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)  # thread-local: unset at first
        if db is None:
            db = self._local.db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        return db

    @staticmethod
    def _transaction(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], None]) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            work(db)
        except BaseException:
            db.execute("ROLLBACK")  # the connection is reused: never leave it in a transaction
            raise
        db.execute("COMMIT")

    def _sweep(self, db: sqlite3.Connection) -> None:
        """Forget expired sessions (at most once a minute: a turn should not pay for it)."""
        now = self._clock()
        if now - self._swept >= SWEEP_EVERY_S:
            self._swept = now
            db.execute("DELETE FROM sessions WHERE used < ?", (now - self.ttl_s,))

    def load(self, caller: str, session_id: str) -> Session | None:
        """The session (None when unknown, expired or another caller's)."""
        with self._lock:
            db = self._connect()
            self._sweep(db)
            row = db.execute(
                "SELECT messages, state FROM sessions WHERE caller = ? AND id = ? AND used >= ?",
                (caller, session_id, self._clock() - self.ttl_s),
            ).fetchone()
        if row is None:
            return None
        return Session(turn_messages(json.loads(row[0])), dict(json.loads(row[1])))

    def save(self, caller: str, session_id: str, session: Session) -> None:
        """Keep the session as given (its last ``max_turns`` messages); the least recently used
        sessions beyond ``max_sessions`` go."""
        turns = list(turn_messages(session.turns))[-self.max_turns :]
        states = {key: dict(state) for key, state in session.states.items() if state}
        row = (
            caller,
            session_id,
            self._clock(),
            json.dumps(turns, ensure_ascii=False),
            json.dumps(states, ensure_ascii=False),
        )

        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO sessions (caller, id, used, messages, state) VALUES (?, ?, ?, ?, ?)",
                row,
            )
            if db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > self.max_sessions:
                db.execute(
                    "DELETE FROM sessions WHERE rowid NOT IN "
                    "(SELECT rowid FROM sessions ORDER BY used DESC LIMIT ?)",
                    (self.max_sessions,),
                )

        with self._lock:
            self._transaction(self._connect(), write)

    def drop(self, caller: str, session_id: str) -> None:
        with self._lock:
            db = self._connect()
            db.execute("DELETE FROM sessions WHERE caller = ? AND id = ?", (caller, session_id))

    def __len__(self) -> int:
        with self._lock:
            db = self._connect()
            cutoff = self._clock() - self.ttl_s
            return int(db.execute("SELECT COUNT(*) FROM sessions WHERE used >= ?", (cutoff,)).fetchone()[0])


def migrate(db: sqlite3.Connection) -> None:
    """Bring a file of an earlier layout to :data:`SCHEMA_VERSION` (inside a transaction).

    Layout 0 kept the advisor's sessions apart (``advisor/<id>``, its facts as the whole state)
    beside the turns the interfaces kept under ``<id>``: each advisor row becomes the advisor's
    state in the ``<id>`` row (its turns when that row has none), and goes.
    """
    if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    rows = db.execute(
        "SELECT caller, id, used, messages, state FROM sessions WHERE substr(id, 1, ?) = ?",
        (len(ADVISOR_PREFIX), ADVISOR_PREFIX),
    ).fetchall()
    for caller, key, used, messages, state in rows:
        session_id = key[len(ADVISOR_PREFIX) :]
        found = db.execute(
            "SELECT used, messages, state FROM sessions WHERE caller = ? AND id = ?", (caller, session_id)
        ).fetchone()
        kept_used, kept_messages, kept_state = found if found is not None else (used, "[]", "{}")
        states = {**json.loads(kept_state), ADVISOR_KEY: json.loads(state)}
        turns = kept_messages if json.loads(kept_messages) else messages
        db.execute(
            "INSERT OR REPLACE INTO sessions (caller, id, used, messages, state) VALUES (?, ?, ?, ?, ?)",
            (caller, session_id, max(used, kept_used), turns, json.dumps(states, ensure_ascii=False)),
        )
        db.execute("DELETE FROM sessions WHERE caller = ? AND id = ?", (caller, key))
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def memory_for(home: Path) -> ConversationMemory:
    """The memory of a ``ZHIWEN_HOME`` (one per home and process)."""
    key = str(home.resolve())
    with _MEMORIES_LOCK:
        memory = _MEMORIES.get(key)
        if memory is None:
            memory = _MEMORIES[key] = ConversationMemory(home / "sessions.sqlite")
        return memory


def forget_memories() -> None:
    """Close nothing, forget every home's memory: the next turn opens the file again (tests, a
    CLI run simulated in the same process)."""
    with _MEMORIES_LOCK:
        _MEMORIES.clear()


_MEMORIES: dict[str, ConversationMemory] = {}
_MEMORIES_LOCK = threading.Lock()
