"""``Store.writer_lock``: one writer per knowledge base across processes (#17).

In-process semantics run on every backend (the ``make_store`` fixture); the cross-process cases
run against real child processes (``python -c``) for the embedded store and PostgreSQL — Qdrant
Edge cannot be opened by a second process at all, and a Qdrant server's lock is a no-op. The
PostgreSQL cases skip with the reason when PostgreSQL/pgvector is not reachable.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from zhiwen.errors import InvalidParameter, KnowledgeBaseBusy
from zhiwen.store.base import Store

# the child opens the same store through the public API and holds its writer lock
_HOLDER = r"""
import sys, time
backend, target, name, hold_s = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
if backend == "embedded":
    from pathlib import Path
    from zhiwen.store.embedded import EmbeddedStore
    store = EmbeddedStore(Path(target), dim=None, name=name)
else:
    from zhiwen.store.postgres import PostgresStore
    store = PostgresStore(target, kb=name, dim=None)
with store.writer_lock(wait=False):
    print("locked", flush=True)
    time.sleep(hold_s)
print("released", flush=True)
"""
_CHILD_START_S = 60  # importing numpy/psycopg on a busy 2-core machine
PROCESS_BACKENDS = pytest.mark.parametrize("make_store", ["embedded", "postgres"], indirect=True)


def _target(store: Any) -> tuple[str, str, str]:
    """(backend, where the child opens it, KB name) of an embedded or PostgreSQL store."""
    if store.backend == "embedded":
        return "embedded", str(store.path), store.name
    return "postgres", store.url, store.kb


@contextlib.contextmanager
def _holder(store: Any, hold_s: float = 60.0) -> Iterator[subprocess.Popen[str]]:
    """A child process holding ``store``'s writer lock (yielded once it has it; killed after)."""
    backend, target, name = _target(store)
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, backend, target, name, str(hold_s)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    watchdog = threading.Timer(_CHILD_START_S, child.kill)
    watchdog.start()
    try:
        assert child.stdout is not None
        line = child.stdout.readline().strip()
        watchdog.cancel()
        if line != "locked":
            child.kill()
            _, err = child.communicate(timeout=10)
            pytest.fail(f"the lock holder did not start: {line!r} {err[-2000:]}")
        yield child
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=10)


def _try_in_thread(store: Store, **kwargs: Any) -> BaseException | None:
    """Take and release the writer lock in another thread; the error it raised, if any."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            with store.writer_lock(**kwargs):
                pass
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert outcome, "the other thread did not finish"
    return outcome[0]


def _locks_anything(store: Any) -> bool:
    """False for a Qdrant server, whose writer lock is a no-op (no local directory)."""
    return not (store.backend == "qdrant" and store.engine.local_dir is None)


# -- every backend, one process ---------------------------------------------------------------
def test_writer_lock_excludes_other_threads_and_is_reentrant(make_store: Any) -> None:
    store = make_store(dim=8)
    with store.writer_lock(wait=False):
        with store.writer_lock(wait=False):  # re-entered by the holder: no self-deadlock
            pass
        other = _try_in_thread(store, wait=False)
        if _locks_anything(store):
            assert isinstance(other, KnowledgeBaseBusy)
            assert other.code == 3008 and other.http_status == 409
        else:
            assert other is None  # a Qdrant server: the KB layer's file lock covers one machine
        # still held by this thread after the nested exit
        if _locks_anything(store):
            assert isinstance(_try_in_thread(store, wait=False), KnowledgeBaseBusy)
    assert _try_in_thread(store, wait=False) is None  # released on exit


def test_writer_lock_released_on_exception(make_store: Any) -> None:
    store = make_store(dim=8)
    with pytest.raises(RuntimeError), store.writer_lock():
        raise RuntimeError("index run failed")
    assert _try_in_thread(store, wait=False) is None


def test_writer_lock_rejects_a_negative_timeout(make_store: Any) -> None:
    store = make_store(dim=8)
    with pytest.raises(InvalidParameter), store.writer_lock(timeout=-1):
        pass


def test_waiting_thread_is_told_once_and_gets_the_lock(make_store: Any) -> None:
    store = make_store(dim=8)
    if not _locks_anything(store):
        pytest.skip("a Qdrant server's writer lock is a no-op")
    calls: list[str] = []
    release = threading.Event()
    held = threading.Event()

    def holder() -> None:
        with store.writer_lock():
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(30)
    threading.Timer(0.3, release.set).start()
    with store.writer_lock(timeout=30, on_wait=lambda: calls.append("waiting")):
        assert release.is_set()  # not before the holder let go
    thread.join(30)
    assert calls == ["waiting"]


# -- across processes: embedded store and PostgreSQL -------------------------------------------
@PROCESS_BACKENDS
def test_second_process_refused_times_out_then_gets_it_when_holder_is_killed(make_store: Any) -> None:
    store = make_store(dim=None, name="lock_kb_a")
    with _holder(store) as child:
        # wait=False: refused at once, clearly
        with pytest.raises(KnowledgeBaseBusy) as refused, store.writer_lock(wait=False):
            pass
        assert refused.value.code == 3008 and refused.value.http_status == 409
        assert "知识库「lock_kb_a」正在被另一个导入任务写入" in refused.value.message
        assert refused.value.data == {"kb": "lock_kb_a"}

        # wait=True with a timeout: told once before blocking, refused after ~timeout
        calls: list[int] = []
        start = time.monotonic()
        with (
            pytest.raises(KnowledgeBaseBusy) as timed_out,
            store.writer_lock(wait=True, timeout=0.5, on_wait=lambda: calls.append(1)),
        ):
            pass
        waited = time.monotonic() - start
        assert 0.45 <= waited < 5, waited
        assert calls == [1]
        assert "0.5 秒" in timed_out.value.message

        # the holder is SIGKILLed (no cleanup) while this process waits: the lock comes free
        start = time.monotonic()
        threading.Timer(0.3, child.kill).start()
        with store.writer_lock(timeout=20, on_wait=lambda: calls.append(2)):
            waited = time.monotonic() - start
            assert child.wait(10) == -signal.SIGKILL
        assert calls == [1, 2]
        assert waited >= 0.25  # it did wait for the holder
    with store.writer_lock(wait=False):  # released by this process in turn
        pass


# -- backend specifics --------------------------------------------------------------------------
@pytest.mark.parametrize("make_store", ["embedded"], indirect=True)
def test_embedded_lock_file_lives_in_the_store_directory(make_store: Any) -> None:
    store = make_store(dim=8)
    with store.writer_lock():
        assert (store.path / "writer.lock").is_file()
    assert (store.path / "writer.lock").is_file()  # kept: deleting it would race a waiter


def test_advisory_key_is_stable_and_per_kb() -> None:
    from zhiwen.store._pg_lock import advisory_key

    key = advisory_key("zw_manual", "manual")
    assert key == advisory_key("zw_manual", "manual") == -229_861_164_174_378_564
    assert -(2**63) <= key < 2**63
    assert advisory_key("zw_other", "other") != key
    assert advisory_key("zw_manual_1a2b3c4d", "manual") != key


@pytest.mark.parametrize("make_store", ["postgres"], indirect=True)
def test_postgres_lock_has_its_own_session(make_store: Any) -> None:
    import psycopg

    first = make_store(dim=None)
    second = make_store(dim=None)
    with first.writer_lock(wait=False), second.writer_lock(wait=False):  # two KBs never collide
        first.close()  # the pool goes; the lock is not on it
        with psycopg.connect(first.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = ANY(%s)",
                ([_key(first), _key(second)],),
            ).fetchall()
        assert len(rows) == 2 and rows[0][0] != rows[1][0]  # one dedicated session per lock
        reopened = make_store(dim=None, name=first.kb)
        assert isinstance(_try_in_thread(reopened, wait=False), KnowledgeBaseBusy)
    assert _try_in_thread(reopened, wait=False) is None


def _key(store: Any) -> int:
    from zhiwen.store._pg_lock import advisory_key

    return advisory_key(store.schema, store.kb)
