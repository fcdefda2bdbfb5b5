"""The question log in one SQLite file for the home (``<home>/questions.sqlite``), for the
embedded and Qdrant stores: what every KB of the home was asked.

WAL journal (readers never wait for the writer thread), ``synchronous=NORMAL`` (a power cut
may lose the last batches of a log, never corrupt it), one connection per thread.

Example::

    >>> store = SQLiteQuestionStore(home / "questions.sqlite")
    >>> store.add([record]); store.find(record.answer_id).question
    '怎么建库？'
    >>> store.close()
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from zhiwen.questionlog._sql import SQLQuestionStore
from zhiwen.versions import check_sqlite, current

#: the file's layout (``PRAGMA user_version``, checked by :mod:`zhiwen.versions`)
LAYOUT = current("question-log")

_DDL = """
CREATE TABLE IF NOT EXISTS questions (
    answer_id TEXT PRIMARY KEY,
    at REAL NOT NULL,
    kb TEXT NOT NULL,
    app TEXT NOT NULL,
    caller TEXT NOT NULL,
    session_id TEXT,
    question TEXT NOT NULL,
    standalone TEXT,
    normal TEXT NOT NULL,
    answer_type TEXT NOT NULL,
    answerable INTEGER,
    unanswered INTEGER NOT NULL,
    fallback TEXT,
    faq_id TEXT,
    faq_score REAL,
    sources TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    llm_calls INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_kb_at ON questions (kb, at, answer_id);
CREATE INDEX IF NOT EXISTS questions_at ON questions (at);
CREATE INDEX IF NOT EXISTS questions_unanswered ON questions (kb, at) WHERE unanswered = 1;
CREATE TABLE IF NOT EXISTS feedback (
    answer_id TEXT NOT NULL,
    kb TEXT NOT NULL,
    caller TEXT NOT NULL,
    rating TEXT NOT NULL,
    reason TEXT,
    comment TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (answer_id, caller)
);
CREATE INDEX IF NOT EXISTS feedback_kb ON feedback (kb, rating);
"""


class SQLiteQuestionStore(SQLQuestionStore):
    """:class:`~zhiwen.questionlog.base.QuestionStore` in one SQLite file; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[sqlite3.Connection] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        db = self._connect()
        db.execute("PRAGMA journal_mode=WAL")  # persistent for the file
        check_sqlite(db, "question-log", path)
        with db:
            db.executescript(_DDL)

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            # each thread uses only its own; close() may run on another thread
            db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
            with self._lock:
                self._opened.append(db)
        return db

    @contextmanager
    def _cursor(self) -> Iterator[sqlite3.Cursor]:
        db = self._connect()
        with db:  # one transaction: committed on success, rolled back on error
            cur = db.cursor()
            try:
                yield cur
            finally:
                cur.close()

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()
        self._local = threading.local()
