"""The writer thread: batches, drops when full (counted), survives a failing store, purges."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from qlog_records import DAY, T0, rec

from zhiwen.questionlog import LoggedQuestion, Span
from zhiwen.questionlog.sqlite import SQLiteQuestionStore
from zhiwen.questionlog.writer import RecordWriter, Retention

# the records are dated mid-2025: kept whatever today is, unless a case tests the retention
KEEP = Retention(days=0)


def dropped(reason: str) -> float:
    return REGISTRY.get_sample_value("zhiwen_question_log_dropped_total", {"reason": reason}) or 0.0


class HeldStore(SQLiteQuestionStore):
    """A store whose inserts wait until the test lets them go, and can be made to fail."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.go = threading.Event()
        self.entered = threading.Event()
        self.fail = False
        self.batches: list[int] = []

    def add(self, records: Sequence[LoggedQuestion]) -> None:
        self.entered.set()
        self.go.wait(10)
        if self.fail:
            raise RuntimeError("database down")
        self.batches.append(len(records))
        super().add(records)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[HeldStore]:
    store = HeldStore(tmp_path / "q.sqlite")
    yield store
    store.go.set()
    store.close()


def test_a_full_queue_drops_and_counts_without_blocking(held: HeldStore) -> None:
    writer = RecordWriter(held, queue_size=3, batch_size=100, idle_s=0.01, retention=KEEP)
    before = dropped("full")
    assert writer.put(rec())
    assert held.entered.wait(5)  # the thread holds the first record in a stuck insert
    kept = [writer.put(rec()) for _ in range(5)]
    assert kept == [True, True, True, False, False]
    assert dropped("full") - before == 2
    held.go.set()
    assert writer.flush(5)
    assert sum(held.batches) == 4
    writer.close()


def test_records_are_written_in_batches_and_flushed(held: HeldStore) -> None:
    held.go.set()
    writer = RecordWriter(held, queue_size=1000, batch_size=50, idle_s=0.01, retention=KEEP)
    records = [rec() for _ in range(120)]
    for q in records:
        writer.put(q)
    assert writer.flush(5)
    assert max(held.batches) <= 50 and sum(held.batches) == 120
    assert not writer.pending(records[-1].answer_id)
    writer.close()
    assert len(list(held.records("manual", Span()))) == 120


def test_a_failing_store_drops_the_batch_and_the_thread_goes_on(held: HeldStore) -> None:
    writer = RecordWriter(held, queue_size=100, batch_size=100, idle_s=0.01, retention=KEEP)
    before = dropped("error")
    held.fail = True
    held.go.set()
    writer.put(rec())
    assert writer.flush(5)
    assert dropped("error") - before == 1
    held.fail = False
    q = rec()
    writer.put(q)
    writer.close()
    assert held.find(q.answer_id) == q


def test_close_writes_what_is_queued_and_later_records_are_dropped(tmp_path: Path) -> None:
    store = SQLiteQuestionStore(tmp_path / "q.sqlite")
    writer = RecordWriter(store, idle_s=5.0, retention=KEEP)
    records = [rec() for _ in range(10)]
    for q in records:
        writer.put(q)
    writer.close()
    before = dropped("closed")
    assert not writer.put(rec())
    assert dropped("closed") - before == 1
    assert [q.answer_id for q in store.records("manual", Span())] == [q.answer_id for q in records]
    store.close()


def test_retention_purges_in_batches_at_most_every_period(tmp_path: Path) -> None:
    store = SQLiteQuestionStore(tmp_path / "q.sqlite")
    now = [T0]
    writer = RecordWriter(
        store, idle_s=0.01, retention=Retention(days=30, every_s=3600, batch=4), clock=lambda: now[0]
    )
    old = [rec(at=T0 - 40 * DAY + i) for i in range(10)]
    store.add(old)
    fresh = rec(at=T0)
    writer.put(fresh)
    for _ in range(5):  # the purge runs a batch per turn until one comes back short
        writer.flush(5)
    assert [q.answer_id for q in store.records("manual", Span())] == [fresh.answer_id]
    # within the hour nothing more is purged; after it, the next old records go
    store.add([rec(at=T0 - 40 * DAY)])
    writer.put(rec(at=T0))
    writer.flush(5)
    assert len(list(store.records("manual", Span()))) == 3
    now[0] = T0 + 3601
    writer.put(rec(at=now[0]))
    writer.flush(5)
    writer.flush(5)
    assert all(q.at >= T0 for q in store.records("manual", Span()))
    writer.close()
    store.close()


def test_no_retention_keeps_everything(tmp_path: Path) -> None:
    store = SQLiteQuestionStore(tmp_path / "q.sqlite")
    writer = RecordWriter(store, idle_s=0.01, retention=Retention(days=0), clock=lambda: T0)
    store.add([rec(at=T0 - 4000 * DAY)])
    writer.put(rec())
    writer.flush(5)
    writer.close()
    assert len(list(store.records("manual", Span()))) == 2
    store.close()
