"""``bench/dialogues/listings.jsonl`` (the conversation benchmark's listings follow-ups) is true:
each turn's ``expect`` is what the merged constraints say (as the benchmark compares them: every
key equal, ``null`` = absent), and every dialogue's last turn has listings in the shared data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from zhiwen.apps.listings.extract import hard_filters
from zhiwen.apps.listings.followup import constraints, understand
from zhiwen.store.filters import parse_filters

ROOT = Path(__file__).resolve().parents[3]
DIALOGUES = ROOT / "bench" / "dialogues" / "listings.jsonl"
LIANJIA = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data")) / "lianjia_ershoufang"
CITIES = {"上海", "广州", "深圳", "杭州", "成都"}


def _dialogues() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DIALOGUES.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_enough_follow_ups() -> None:
    dialogues = _dialogues()
    assert len(dialogues) >= 12
    assert sum(len(d["turns"]) - 1 for d in dialogues) >= 36
    assert all(d["app"] == "listings" and len(d["turns"]) >= 3 for d in dialogues)


@pytest.mark.parametrize("index", range(len(_dialogues())))
def test_expectations_hold(index: int) -> None:
    users = [t["user"] for t in _dialogues()[index]["turns"]]
    for i, turn in enumerate(_dialogues()[index]["turns"]):
        merged = constraints(understand(users[i], users[:i], kb_cities=CITIES).merged)
        wrong = {k: (merged.get(k), v) for k, v in turn["expect"].items() if merged.get(k) != v}
        assert not wrong, (turn["user"], wrong)


@pytest.fixture(scope="module")
def all_listings() -> list[dict[str, Any]]:
    files = sorted(LIANJIA.glob("*.csv"))
    if len(files) < 5:
        pytest.skip(f"shared data not found at {LIANJIA}")
    from zhiwen.apps.listings.ingest import load_lianjia

    return [dict(d.metadata) for f in files for d in load_lianjia(f).documents]


def test_every_last_turn_has_listings(all_listings: list[dict[str, Any]]) -> None:
    empty = []
    for dialogue in _dialogues():
        users = [t["user"] for t in dialogue["turns"]]
        req = understand(users[-1], users[:-1], kb_cities=CITIES).merged
        condition = parse_filters(hard_filters(req, tolerance=0.1))
        if not any(condition.matches(m) for m in all_listings):
            empty.append(users)
    assert not empty
