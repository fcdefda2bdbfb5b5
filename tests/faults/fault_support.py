"""Helpers of the fault suite (imported by its tests; fixtures live in conftest.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# the deadline plus this: generous, for a busy box; the tests show that a deadline fired (a hung
# dependency would hold a request 30 s or more), latency is measured in bench/
MARGIN_S = 8.0


def elapsed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def sse_events(text: str) -> list[tuple[str, Any]]:
    """``(event, data)`` of a server-sent-events body (``data`` parsed as JSON)."""
    events: list[tuple[str, Any]] = []
    name = "message"
    for line in text.splitlines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            events.append((name, json.loads(line.split(":", 1)[1])))
            name = "message"
    return events


def has_listings(home: Path) -> bool:
    """Whether the session home holds the listings KB (needs ../shared/data)."""
    return (home / "kbs" / "listings" / "kb.json").is_file()
