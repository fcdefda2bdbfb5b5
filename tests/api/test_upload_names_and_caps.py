"""Issue 29, in process: file names cut by UTF-8 bytes (never by characters), and the upload
queue's caps — counted before a byte is read and while the bytes arrive."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiwen.uploads.budget import SpoolBudget, UploadQueueFull, UploadSpoolFull
from zhiwen.uploads.names import MAX_NAME_BYTES, safe_filename, unique_name


@pytest.mark.parametrize(
    ("name", "suffix"),
    [
        ("通" * 300 + ".pdf", ".pdf"),
        ("通知" * 100 + ".docx", ".docx"),
        ("a" * 400 + ".txt", ".txt"),
        ("𠮷" * 100 + ".md", ".md"),  # 4-byte characters (CJK extension B)
        ("无扩展名" * 100, ""),
        ("名" * 100 + "." + "x" * 300, ""),  # no real extension: cut like any name
    ],
)
def test_long_names_are_cut_to_255_bytes_keeping_the_extension(name: str, suffix: str) -> None:
    cut = safe_filename(name)
    assert len(cut.encode("utf-8")) <= MAX_NAME_BYTES
    assert cut.endswith(suffix) and cut[:2] == name[:2]
    cut.encode("utf-8").decode("utf-8")  # never a broken character


def test_short_names_are_kept_and_duplicates_stay_within_the_limit() -> None:
    assert safe_filename("通知.pdf") == "通知.pdf"
    taken: set[str] = set()
    names = [unique_name(safe_filename("关" * 300 + ".txt"), taken) for _ in range(12)]
    assert len(set(names)) == 12
    assert all(len(n.encode()) <= MAX_NAME_BYTES and n.endswith(".txt") for n in names)
    assert names[1].endswith("-2.txt") and names[11].endswith("-12.txt")


def test_the_budget_refuses_past_its_caps(tmp_path: Path) -> None:
    budget = SpoolBudget(max_jobs=2, max_bytes=1000, folder=tmp_path)
    budget.admit(None)
    budget.take(600)
    with pytest.raises(UploadSpoolFull) as full:
        budget.take(600)  # while the bytes arrive: 507
    assert full.value.http_status == 507 and "空间不足" in full.value.message
    budget.settle(600, queued=True)  # the upload became a job keeping 600 bytes
    with pytest.raises(UploadSpoolFull):
        budget.admit(500)  # a declared length that cannot fit: refused before reading
    budget.admit(100)
    with pytest.raises(UploadQueueFull) as busy:
        budget.admit(None)  # one job + one arriving upload = the cap
    assert busy.value.http_status == 429 and busy.value.headers["Retry-After"]
    budget.settle(0, queued=False)  # the arriving one was refused: its place is free again
    budget.admit(None)
