"""File names of uploads as they are saved: safe on disk, unique in their upload, at most 255 bytes.

A name is cut by UTF-8 bytes (the limit of ext4, XFS, btrfs, APFS), never by characters, at a
character boundary, and its extension is kept whole, so a long Chinese name keeps its type and a
duplicate keeps its ``-2`` / ``-3`` suffix.

Example::

    >>> safe_filename("../../通知.pdf")
    '通知.pdf'
    >>> taken = set()
    >>> unique_name("通知.pdf", taken), unique_name("通知.pdf", taken)
    ('通知.pdf', '通知-2.pdf')
"""

from __future__ import annotations

import re
import unicodedata

MAX_NAME_BYTES = 255  # the file-name limit of ext4, XFS, btrfs, APFS (bytes, not characters)
_UNSAFE = re.compile(r"[^\w\u3400-\u9fff（）().\-+ ]")
_MAX_SUFFIX_BYTES = 16


def fit_name(stem: str, suffix: str = "", max_bytes: int = MAX_NAME_BYTES) -> str:
    """``stem + suffix`` in at most ``max_bytes`` of UTF-8, cut at a character boundary; the
    suffix (``.pdf``, ``-2.pdf``) is kept whole, so the type and uniqueness survive the cut."""
    room = max(max_bytes - len(suffix.encode("utf-8")), 1)
    return stem.encode("utf-8")[:room].decode("utf-8", "ignore") + suffix


def split_suffix(name: str) -> tuple[str, str]:
    """``通知.pdf`` → ``("通知", ".pdf")``; a name without a short extension has no suffix."""
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 0 < len(ext.encode("utf-8")) <= _MAX_SUFFIX_BYTES:
        return stem, dot + ext
    return name, ""


def safe_filename(name: str | None, fallback: str = "file") -> str:
    """A file name that is safe on disk: no folders, no control characters, no leading dots, at
    most :data:`MAX_NAME_BYTES` bytes of UTF-8 (a long Chinese name is cut, its extension kept)."""
    raw = unicodedata.normalize("NFC", name or "")
    raw = raw.replace("\\", "/").rsplit("/", 1)[-1]
    raw = "".join(ch for ch in raw if unicodedata.category(ch)[0] != "C")
    raw = _UNSAFE.sub("_", raw).strip(" .")
    if not raw or set(raw) <= {"_", "."}:
        raw = fallback
    return fit_name(*split_suffix(raw))


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2.pdf``, ``name-3.pdf``… (still within the byte limit) if taken; the
    result is added to ``taken``."""
    candidate, n = name, 2
    stem, suffix = split_suffix(name)
    while candidate in taken:
        candidate = fit_name(stem, f"-{n}{suffix}")
        n += 1
    taken.add(candidate)
    return candidate
