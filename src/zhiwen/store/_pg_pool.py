"""Shared, self-healing psycopg connection pools for the PostgreSQL store.

One pool per (URL, pool settings) per process, shared by every :class:`PostgresStore` of that
database (a server with many knowledge bases must not get one pool per KB) and reference-counted,
so the last store to close closes it.

Seed 000's tuning maps onto :class:`psycopg_pool.ConnectionPool`: ``pool_size``/``max_overflow`` →
``min_size``/``max_size``, ``pool_pre_ping`` → ``check=ConnectionPool.check_connection``,
``pool_recycle`` → ``max_lifetime``, ``pool_timeout`` → ``timeout``.

Two things the plain pool does not do, added here:

* **fail fast when the server is down**: a checkout waits at most ~1 s on the pool, then probes
  the server with one direct connection (``connect_timeout``); if that fails the caller gets
  :class:`~zhiwen.errors.StoreUnavailable` at once instead of after the 30 s pool timeout;
* **recover without restart**: after an outage the pool's own reconnect attempts may be sleeping
  in exponential back-off (up to minutes). When the probe succeeds but the pool, with no
  connection in use by us, still has nothing to give, the pool is replaced by a fresh one.

Example::

    shared = acquire_pool(url, settings)
    with shared.connection() as conn:
        conn.execute("SELECT 1")
    release_pool(shared)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from time import monotonic
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from zhiwen.config import PostgresSettings
from zhiwen.errors import StoreUnavailable
from zhiwen.metrics import STORE_ERRORS
from zhiwen.retry import current_deadline

log = logging.getLogger(__name__)

DOWN_MESSAGE = "无法连接 PostgreSQL 数据库，请稍后重试"
DEADLINE_MESSAGE = "数据库查询超出请求时限，请稍后重试或调大 timeout_s"
# first wait on the pool before probing the server directly
_FAST_WAIT_S = 1.0
# errors that mean "the server or the connection is gone", as opposed to a bad query
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    psycopg.InterfaceError,
    PoolTimeout,
    PoolClosed,
)


def unavailable(exc: BaseException | str, kind: str) -> StoreUnavailable:
    """Count the failure and build the user-facing error (HTTP 503, code 2002)."""
    STORE_ERRORS.labels(backend="postgres", kind=kind).inc()
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreUnavailable(detail, message=DOWN_MESSAGE)


def _deadline_ms() -> int | None:
    """Milliseconds left of the request's deadline (:func:`zhiwen.retry.current_deadline`), if any."""
    deadline = current_deadline()
    if deadline is None:
        return None
    left = deadline.remaining()
    if left <= 0:
        raise StoreUnavailable(
            "the request's deadline passed before the query",
            message=DEADLINE_MESSAGE,
            data={"reason": "deadline"},
        )
    return max(1, int(left * 1000))  # 0 would mean "no limit"


def connect_kwargs(url: str, settings: PostgresSettings) -> dict[str, Any]:
    """Connection options; an ``application_name`` in the URL wins over the default."""
    kwargs: dict[str, Any] = {"connect_timeout": max(1, round(settings.connect_timeout_s))}
    try:
        in_url = "application_name" in conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        in_url = False
    if not in_url:
        kwargs["application_name"] = "zhiwen"
    return kwargs


class SharedPool:
    """A :class:`ConnectionPool` plus the probe-and-replace logic above."""

    def __init__(self, url: str, settings: PostgresSettings, session_settings: dict[str, str]) -> None:
        self.url = url
        self.settings = settings
        self.session_settings = session_settings
        self.refs = 0
        self._lock = threading.Lock()
        self._in_use = 0
        self._pool = self._new_pool()

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        for name, value in self.session_settings.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        conn.commit()

    def _connect_kwargs(self) -> dict[str, Any]:
        return connect_kwargs(self.url, self.settings)

    def _new_pool(self) -> ConnectionPool:
        s = self.settings
        return ConnectionPool(
            self.url,
            min_size=min(s.pool_min_size, s.pool_max_size),
            max_size=s.pool_max_size,
            timeout=s.pool_timeout_s,
            max_lifetime=s.pool_max_lifetime_s,
            max_idle=s.pool_max_idle_s,
            check=ConnectionPool.check_connection,
            configure=self._configure,
            kwargs=self._connect_kwargs(),
            name="zhiwen-pg",
            open=True,
        )

    def probe(self) -> None:
        """One direct connection attempt; raises the driver's error when the server is down."""
        with psycopg.connect(self.url, autocommit=True, **self._connect_kwargs()) as conn:
            conn.execute("SELECT 1")

    def _getconn(self) -> tuple[ConnectionPool, psycopg.Connection[Any]]:
        pool = self._pool
        deadline = monotonic() + self.settings.pool_timeout_s
        try:
            return pool, pool.getconn(timeout=min(_FAST_WAIT_S, self.settings.pool_timeout_s))
        except (PoolTimeout, PoolClosed):
            pass
        self.probe()  # server down → psycopg.OperationalError, mapped by the caller
        with self._lock:
            if self._in_use == 0 and self._pool is pool:
                # the server answers but the pool has nothing while nobody uses it: the pool's
                # reconnect attempts are stuck in back-off after an outage; start afresh
                log.warning("PostgreSQL is reachable again; replacing the connection pool")
                self._pool = self._new_pool()
                pool.close(timeout=0)
            pool = self._pool
        return pool, pool.getconn(timeout=max(0.1, deadline - monotonic()))

    @contextmanager
    def connection(
        self, kind: str = "query", *, autocommit: bool = False
    ) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in a transaction (committed on success, rolled back on error).

        ``autocommit=True`` runs each statement on its own instead (no BEGIN/COMMIT round
        trips): for searches, whose statements need no common snapshot.
        Connection-level failures (server down, connection killed, pool exhausted) become
        :class:`StoreUnavailable`; other errors propagate unchanged.

        Inside a request with a deadline, every statement gets ``statement_timeout`` = the time
        left (``SET LOCAL`` in a transaction; for the session, reset on return, in autocommit
        mode); a statement cancelled by it raises :class:`StoreUnavailable` (``reason: deadline``).
        """
        timeout_ms = _deadline_ms()
        try:
            pool, conn = self._getconn()
        except CONNECTION_ERRORS as exc:
            raise unavailable(exc, "connect") from exc
        with self._lock:
            self._in_use += 1
        try:
            if autocommit:
                conn.autocommit = True
                try:
                    if timeout_ms is not None:
                        conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(timeout_ms),))
                    yield conn
                finally:
                    with suppress(psycopg.Error):  # a broken connection is discarded by the pool
                        if timeout_ms is not None:
                            conn.execute("RESET statement_timeout")
                        conn.autocommit = False
            else:
                with conn.transaction():
                    if timeout_ms is not None:
                        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
                    yield conn
        except psycopg.errors.QueryCanceled as exc:  # before CONNECTION_ERRORS: it is one of them
            STORE_ERRORS.labels(backend="postgres", kind="deadline").inc()
            raise StoreUnavailable(
                str(exc).splitlines()[0], message=DEADLINE_MESSAGE, data={"reason": "deadline"}
            ) from exc
        except CONNECTION_ERRORS as exc:
            raise unavailable(exc, kind) from exc
        finally:
            with self._lock:
                self._in_use -= 1
            pool.putconn(conn)

    def close(self) -> None:
        self._pool.close(timeout=1.0)


_REGISTRY: dict[tuple[str, str], SharedPool] = {}
_REGISTRY_LOCK = threading.Lock()


def acquire_pool(url: str, settings: PostgresSettings, session_settings: dict[str, str]) -> SharedPool:
    key = (url, settings.model_dump_json() + repr(sorted(session_settings.items())))
    with _REGISTRY_LOCK:
        shared = _REGISTRY.get(key)
        if shared is None:
            shared = _REGISTRY[key] = SharedPool(url, settings, session_settings)
        shared.refs += 1
        return shared


def release_pool(shared: SharedPool) -> None:
    with _REGISTRY_LOCK:
        shared.refs -= 1
        if shared.refs > 0:
            return
        for key, value in list(_REGISTRY.items()):
            if value is shared:
                del _REGISTRY[key]
    shared.close()
