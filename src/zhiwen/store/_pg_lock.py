"""The PostgreSQL store's writer lock: a session-level advisory lock on a connection of its own.

``pg_advisory_lock(key)`` is held by a database *session*, so the lock gets a dedicated
connection (never one from the shared pool, whose connections other statements reuse and whose
sessions outlive the lock). Closing that connection releases the lock; so does the session's
end for any other reason — the holder's process dying (``kill -9`` included: the kernel closes
its socket and the server ends the backend), a dropped connection or a server restart. A lock
lost that way is not noticed by its holder; its next write through the pool fails anyway.

The key is a stable 64-bit hash of (``zhiwen.writer``, the KB's schema, the KB's name), so two
knowledge bases never share a lock and every process (and version) computes the same key.
Advisory locks are per database: two databases on one server never conflict. Behind PgBouncer
the lock needs *session* pooling (transaction pooling hands the session to other clients).

``wait=False`` is ``pg_try_advisory_lock``; ``wait=True`` is one blocking ``pg_advisory_lock``
(the server queues the waiters and wakes the next one when the holder leaves) bounded by
``lock_timeout``.

Example::

    lock = AdvisoryWriterLock(url, settings, schema="zw_manual", kb="manual")
    with lock.hold(wait=False):
        ...
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from typing import Any

import psycopg

from zhiwen.config import PostgresSettings
from zhiwen.store._pg_pool import CONNECTION_ERRORS, connect_kwargs, unavailable
from zhiwen.store._writer_lock import WriterLock

Connection = psycopg.Connection[Any]

_KEY_NAMESPACE = "zhiwen.writer"


def advisory_key(schema: str, kb: str) -> int:
    """The signed 64-bit advisory lock key of one knowledge base (stable across processes)."""
    digest = hashlib.blake2b(f"{_KEY_NAMESPACE}\0{schema}\0{kb}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class AdvisoryWriterLock(WriterLock[Connection]):
    """:class:`~zhiwen.store._writer_lock.WriterLock` over ``pg_advisory_lock`` (module docstring)."""

    def __init__(self, url: str, settings: PostgresSettings, *, schema: str, kb: str) -> None:
        self.url = url
        self.settings = settings
        self.key = advisory_key(schema, kb)
        super().__init__(kb, ("pg", url, self.key))

    def _open(self) -> Connection:
        try:
            conn = psycopg.connect(self.url, autocommit=True, **connect_kwargs(self.url, self.settings))
        except CONNECTION_ERRORS as exc:
            raise unavailable(exc, "connect") from exc
        try:
            # the session only waits and then sits idle for the whole run: no server default may
            # cut it short (statement_timeout would end the wait, idle_session_timeout the lock)
            conn.execute("SELECT set_config('statement_timeout', '0', false)")
            with contextlib.suppress(psycopg.errors.UndefinedObject):  # PostgreSQL < 14 has none
                conn.execute("SELECT set_config('idle_session_timeout', '0', false)")
        except BaseException as exc:
            conn.close()
            if isinstance(exc, CONNECTION_ERRORS):
                raise unavailable(exc, "lock") from exc
            raise
        return conn

    def _try(self, handle: Connection) -> bool:
        try:
            row = handle.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
        except CONNECTION_ERRORS as exc:
            raise unavailable(exc, "lock") from exc
        return bool(row and row[0])

    def _block(self, handle: Connection, timeout: float | None) -> bool:
        # lock_timeout 0 = wait without limit; otherwise at least 1 ms (0 would mean no limit)
        limit_ms = 0 if timeout is None else max(1, math.ceil(timeout * 1000))
        try:
            handle.execute("SELECT set_config('lock_timeout', %s, false)", (str(limit_ms),))
            handle.execute("SELECT pg_advisory_lock(%s)", (self.key,))
        except psycopg.errors.LockNotAvailable:
            return False
        except CONNECTION_ERRORS as exc:
            raise unavailable(exc, "lock") from exc
        return True

    def _close(self, handle: Connection) -> None:
        # unlock first: the server ends a closed session's backend asynchronously, so a writer
        # trying right after this returns could still find the lock taken
        with contextlib.suppress(Exception):
            if not handle.closed and handle.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                handle.execute("SELECT pg_advisory_unlock_all()")
        # ending the session releases every advisory lock it holds (and cancels a pending wait)
        with contextlib.suppress(Exception):
            handle.close()
