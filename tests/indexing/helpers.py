"""Helpers of the indexing tests: a BEIR corpus on disk, polling with a deadline."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

Spawn = Callable[..., subprocess.Popen[str]]


def write_beir(root: Path, n: int, prefix: str = "p", topic: str = "知识库") -> Path:
    """A BEIR-style corpus of ``n`` distinct passages (one chunk each)."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n):
            text = f"这是第{i}条段落，内容关于{topic}{i % 7}号、检索和向量。" * 2
            f.write(
                json.dumps({"_id": f"{prefix}{i}", "title": f"{prefix}{i}", "text": text}, ensure_ascii=False)
            )
            f.write("\n")
    return root


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
