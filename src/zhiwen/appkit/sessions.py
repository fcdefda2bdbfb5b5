"""Conversations that outlive a request: the turns (and an app's own state) of each session,
durable under ``ZHIWEN_HOME``, bounded, expiring, and bound to their caller.

A client that sends the whole history (every OpenAI chat client) needs none of this; a client
that sends only a ``session_id`` — ``curl``, the CLI's ``--session``, an app route — gets the
conversation back from here. One SQLite file (``<home>/sessions.sqlite``) serves the server and
the CLI alike, so ``zhiwen advisor chat --session s1`` continues across runs.

* **Bound to the caller**: a session is keyed by ``(caller, session_id)``; the caller is the
  fingerprint of the API key (empty without keys), so another key cannot read it.
* **Bounded**: at most ``max_sessions`` sessions (the least recently used go first) and the last
  ``max_turns`` messages of each; **expiring**: a session unused for ``ttl_s`` seconds is gone.

Example::

    >>> memory = ConversationMemory(tmp_path / "sessions.sqlite")
    >>> memory.append("", "s1", [{"role": "user", "content": "红烧肉怎么做？"},
    ...                          {"role": "assistant", "content": "……"}])
    >>> [m["content"] for m in memory.history("", "s1")]
    ['红烧肉怎么做？', '……']
    >>> memory.history("another-key", "s1")
    []
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_TTL_S = 7 * 24 * 3600.0
DEFAULT_MAX_TURNS = 20
#: seconds between two sweeps of expired sessions
SWEEP_EVERY_S = 60.0

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
        db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)  # thread-local: unset at first
        if db is None:
            db = self._local.db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        return db

    def _sweep(self, db: sqlite3.Connection) -> None:
        """Forget expired sessions (at most once a minute: a turn should not pay for it)."""
        now = self._clock()
        if now - self._swept >= SWEEP_EVERY_S:
            self._swept = now
            db.execute("DELETE FROM sessions WHERE used < ?", (now - self.ttl_s,))

    def _row(self, db: sqlite3.Connection, caller: str, session_id: str) -> tuple[str, str] | None:
        self._sweep(db)
        row = db.execute(
            "SELECT messages, state FROM sessions WHERE caller = ? AND id = ? AND used >= ?",
            (caller, session_id, self._clock() - self.ttl_s),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def history(self, caller: str, session_id: str) -> list[dict[str, Any]]:
        """The session's messages, oldest first ([] when unknown, expired or another caller's)."""
        with self._lock:
            db = self._connect()
            row = self._row(db, caller, session_id)
        return list(json.loads(row[0])) if row else []

    def state(self, caller: str, session_id: str) -> dict[str, Any]:
        """The app's own state of the session ({} when there is none)."""
        with self._lock:
            db = self._connect()
            row = self._row(db, caller, session_id)
        return dict(json.loads(row[1])) if row else {}

    def append(
        self,
        caller: str,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        """Add a turn's messages (and replace the app's state when given); keeps the last turns."""
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                self._write(db, caller, session_id, messages, state)
            except BaseException:
                db.execute("ROLLBACK")  # the connection is reused: never leave it in a transaction
                raise
            db.execute("COMMIT")

    def _write(
        self,
        db: sqlite3.Connection,
        caller: str,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        state: Mapping[str, Any] | None,
    ) -> None:
        row = self._row(db, caller, session_id)
        kept = (json.loads(row[0]) if row else []) + [
            {"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in messages
        ]
        new_state = dict(state) if state is not None else (json.loads(row[1]) if row else {})
        db.execute(
            "INSERT OR REPLACE INTO sessions (caller, id, used, messages, state) VALUES (?, ?, ?, ?, ?)",
            (
                caller,
                session_id,
                self._clock(),
                json.dumps(kept[-self.max_turns :], ensure_ascii=False),
                json.dumps(new_state, ensure_ascii=False),
            ),
        )
        if db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > self.max_sessions:
            db.execute(
                "DELETE FROM sessions WHERE rowid NOT IN "
                "(SELECT rowid FROM sessions ORDER BY used DESC LIMIT ?)",
                (self.max_sessions,),
            )

    def drop(self, caller: str, session_id: str) -> None:
        with self._lock:
            db = self._connect()
            db.execute("DELETE FROM sessions WHERE caller = ? AND id = ?", (caller, session_id))

    def __len__(self) -> int:
        with self._lock:
            db = self._connect()
            cutoff = self._clock() - self.ttl_s
            return int(db.execute("SELECT COUNT(*) FROM sessions WHERE used >= ?", (cutoff,)).fetchone()[0])


def memory_for(home: Path) -> ConversationMemory:
    """The memory of a ``ZHIWEN_HOME`` (one per home and process)."""
    key = str(home.resolve())
    with _MEMORIES_LOCK:
        memory = _MEMORIES.get(key)
        if memory is None:
            memory = _MEMORIES[key] = ConversationMemory(home / "sessions.sqlite")
        return memory


_MEMORIES: dict[str, ConversationMemory] = {}
_MEMORIES_LOCK = threading.Lock()
