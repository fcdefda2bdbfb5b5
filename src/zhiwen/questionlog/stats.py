"""The owner's numbers: per day and over the whole window — questions, answered rate, FAQ hit
rate, 👍/👎, LLM calls and tokens, latency p50/p95.

Computed here, in Python, from the store's narrow rows (:class:`~zhiwen.questionlog.base.StatRow`)
so both backends give the same numbers; percentiles interpolate linearly between the two nearest
ranks (numpy's default, Excel's ``PERCENTILE.INC``).

Example::

    >>> s = summarise([StatRow(at=0.0, answer_type="faq", unanswered=False, latency_ms=12.0,
    ...                        llm_calls=0, prompt_tokens=0, completion_tokens=0, up=1)])
    >>> s.overall.questions, s.overall.faq_hit_rate, s.overall.latency_p50_ms
    (1, 1.0, 12.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta, tzinfo
from typing import Any

from zhiwen.questionlog.base import StatRow
from zhiwen.questionlog.model import day_of, day_start


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0–100) of ``values`` by linear interpolation; None when empty.

    Example::

        >>> percentile([10.0, 20.0, 30.0, 40.0], 50)
        25.0
    """
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass
class Tally:
    """The numbers of one day, or of the whole window (``day`` None)."""

    day: date | None = None
    questions: int = 0
    unanswered: int = 0
    faq_hits: int = 0
    up: int = 0
    down: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latencies: list[float] = field(default_factory=list, repr=False)

    def add(self, row: StatRow) -> None:
        self.questions += 1
        self.unanswered += row.unanswered
        self.faq_hits += row.answer_type == "faq"
        self.up += row.up
        self.down += row.down
        self.llm_calls += row.llm_calls
        self.prompt_tokens += row.prompt_tokens
        self.completion_tokens += row.completion_tokens
        self.latencies.append(row.latency_ms)

    @property
    def answered(self) -> int:
        return self.questions - self.unanswered

    @property
    def answered_rate(self) -> float | None:
        return _rate(self.answered, self.questions)

    @property
    def faq_hit_rate(self) -> float | None:
        return _rate(self.faq_hits, self.questions)

    @property
    def latency_p50_ms(self) -> float | None:
        return percentile(self.latencies, 50)

    @property
    def latency_p95_ms(self) -> float | None:
        return percentile(self.latencies, 95)

    def to_json(self) -> dict[str, Any]:
        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "day": None if self.day is None else self.day.isoformat(),
            "questions": self.questions,
            "answered": self.answered,
            "unanswered": self.unanswered,
            "answered_rate": rounded(self.answered_rate),
            "faq_hits": self.faq_hits,
            "faq_hit_rate": rounded(self.faq_hit_rate),
            "up": self.up,
            "down": self.down,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_p50_ms": rounded(self.latency_p50_ms),
            "latency_p95_ms": rounded(self.latency_p95_ms),
        }


@dataclass(frozen=True, slots=True)
class LogStats:
    """``days``: one :class:`Tally` per day with questions, oldest first; ``overall``: all."""

    days: tuple[Tally, ...]
    overall: Tally

    def to_json(self) -> dict[str, Any]:
        return {"overall": self.overall.to_json(), "days": [d.to_json() for d in self.days]}


def summarise(rows: Iterable[StatRow], zone: tzinfo | None = None) -> LogStats:
    """Per day (in ``zone``; None: the server's) and overall numbers of ``rows``."""
    overall = Tally()
    days: dict[date, Tally] = {}
    tally, start, end = overall, 0.0, 0.0  # the day of the last row, and its [start, end)
    for row in rows:
        if not start <= row.at < end:  # rows come in time order: a new day now and then
            day = day_of(row.at, zone)
            start, end = day_start(day, zone), day_start(day + timedelta(days=1), zone)
            tally = days.get(day) or days.setdefault(day, Tally(day=day))
        tally.add(row)
        overall.add(row)
    return LogStats(days=tuple(days[d] for d in sorted(days)), overall=overall)
